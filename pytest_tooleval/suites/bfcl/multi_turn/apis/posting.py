"""`TwitterAPI`: one account's tweets, retweets, comments and follows (docs/bfcl-multi-turn.md#twitterapi)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TypedDict

from .....json_value import JSONValue
from ..tables import Tables


class Tweet(TypedDict):
    id: int
    username: str
    content: str
    tags: list[str]
    mentions: list[str]


Comment = dict[str, str]  # {"username", "content"}
Outcome = dict[str, JSONValue]  # a status or an error

# the defaults of `post_tweet`'s lists: markers only, never stored (the instance's own lists are)
_NO_TAGS: list[str] = []
_NO_MENTIONS: list[str] = []


class TwitterAPI:
    """A single account (`username`/`password`) that posts, retweets, comments and follows once authenticated.

    Attributes:
        username, password: the account's credentials.
        authenticated: whether `authenticate_twitter` succeeded (or the scenario says so).
        tweets: {tweet id (int): tweet}.
        comments: {tweet id: [comment]}; loaded ids stay strings, new ones are ints.
        retweets: {username: [tweet ids]}.
        following_list: the user names followed.
        tweet_counter: the id the next tweet gets.
    """

    username: str
    password: str
    authenticated: bool
    tweets: dict[int, Tweet]
    comments: dict[int | str, list[Comment]]
    retweets: dict[str, list[int]]
    following_list: list[str]
    tweet_counter: int

    def __init__(self, tables: Tables) -> None:
        self._tables = tables
        # upstream's `tags=[]`/`mentions=[]` defaults are one list each that every tweet posted without them
        # shares, and `mention` extends in place: kept per instance, never across instances or samples
        # (docs/bfcl-multi-turn.md#fresh-process-semantics)
        self._default_tags: list[str] = []
        self._default_mentions: list[str] = []

    def load_scenario(self, scenario: Mapping[str, JSONValue], long_context: bool = False) -> None:
        defaults = self._tables.default_state("TwitterAPI")
        for name in ("username", "password", "authenticated", "tweets", "comments", "retweets", "following_list",
                     "tweet_counter"):
            setattr(self, name, scenario.get(name, defaults[name]))
        self.tweets = {int(key): tweet for key, tweet in self.tweets.items()}  # JSON's string ids become ints

    def authenticate_twitter(self, username: str, password: str) -> dict[str, bool]:
        if username != self.username or password != self.password:
            return {"authentication_status": False}
        self.authenticated = True
        return {"authentication_status": True}

    def posting_get_login_status(self) -> dict[str, bool]:
        return {"login_status": bool(self.authenticated)}

    def post_tweet(self, content: str, tags: list[str] = _NO_TAGS, mentions: list[str] = _NO_MENTIONS
                   ) -> Tweet | Outcome:
        if not self.authenticated:
            return _not_authenticated("posting")
        tweet: Tweet = {"id": self.tweet_counter, "username": self.username, "content": content,
                        "tags": self._default_tags if tags is _NO_TAGS else tags,
                        "mentions": self._default_mentions if mentions is _NO_MENTIONS else mentions}
        self.tweets[self.tweet_counter] = tweet  # stored and returned as the same object
        self.tweet_counter += 1
        return tweet

    def retweet(self, tweet_id: int) -> Outcome:
        if not self.authenticated:
            return _not_authenticated("retweeting")
        if tweet_id not in self.tweets:
            return _no_tweet(tweet_id)
        mine = self.retweets.setdefault(self.username, [])
        if tweet_id in mine:
            return {"retweet_status": "Already retweeted"}
        mine.append(tweet_id)
        return {"retweet_status": "Successfully retweeted"}

    def comment(self, tweet_id: int, comment_content: str) -> Outcome:
        if not self.authenticated:
            return _not_authenticated("commenting")
        if tweet_id not in self.tweets:
            return _no_tweet(tweet_id)
        self.comments.setdefault(tweet_id, []).append({"username": self.username, "content": comment_content})
        return {"comment_status": "Comment added successfully"}

    def mention(self, tweet_id: int, mentioned_usernames: list[str]) -> Outcome:
        if tweet_id not in self.tweets:  # no authentication asked, as upstream
            return _no_tweet(tweet_id)
        self.tweets[tweet_id]["mentions"].extend(mentioned_usernames)  # in place: a shared default list too
        return {"mention_status": "Users mentioned successfully"}

    def follow_user(self, username_to_follow: str) -> Outcome:
        if not self.authenticated:
            return _not_authenticated("following")
        if username_to_follow in self.following_list:
            return {"follow_status": False}
        self.following_list.append(username_to_follow)
        return {"follow_status": True}

    def list_all_following(self) -> dict[str, list[str]] | Outcome:
        if not self.authenticated:
            return _not_authenticated("listing following")
        return {"following_list": self.following_list}

    def unfollow_user(self, username_to_unfollow: str) -> Outcome:
        if not self.authenticated:
            return _not_authenticated("unfollowing")
        if username_to_unfollow not in self.following_list:
            return {"unfollow_status": False}
        self.following_list.remove(username_to_unfollow)
        return {"unfollow_status": True}

    def get_tweet(self, tweet_id: int) -> Tweet | Outcome:
        if tweet_id not in self.tweets:
            return _no_tweet(tweet_id)
        return self.tweets[tweet_id]

    def get_user_tweets(self, username: str) -> list[Tweet]:
        return [tweet for tweet in self.tweets.values() if tweet["username"] == username]

    def search_tweets(self, keyword: str) -> list[Tweet]:
        # per tweet, content first, then the tags: an odd keyword fails only when a tweet is looked at
        return [tweet for tweet in self.tweets.values()
                if keyword.lower() in tweet["content"].lower()
                or keyword.lower() in [tag.lower() for tag in tweet["tags"]]]

    def get_tweet_comments(self, tweet_id: int) -> list[Comment] | Outcome:  # the stored list itself
        if tweet_id not in self.tweets:
            return _no_tweet(tweet_id)
        return self.comments.get(tweet_id, [])

    def get_user_stats(self, username: str) -> dict[str, int]:
        return {"tweet_count": len(self.get_user_tweets(username)),
                "following_count": len(self.following_list) if username == self.username else 0,
                "retweet_count": len(self.retweets.get(username, []))}


def _not_authenticated(action: str) -> Outcome:
    return {"error": f"User not authenticated. Please authenticate before {action}."}


def _no_tweet(tweet_id: object) -> Outcome:
    return {"error": f"Tweet with ID {tweet_id} not found."}
