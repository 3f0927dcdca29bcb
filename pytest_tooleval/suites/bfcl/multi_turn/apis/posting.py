"""`TwitterAPI`: one account's tweets, retweets, comments and follows (docs/bfcl-multi-turn.md#twitterapi)."""

from __future__ import annotations

from typing import Any

from .....json_value import JSONValue
from ..tables import Tables

Tweet = dict[str, Any]  # a tweet as loaded or posted: the scenario's values, of any type, kept as they are


class _Unset:
    """The default of `post_tweet`'s lists: replaced by the instance's own shared list (see `post_tweet`)."""

    def __repr__(self) -> str:
        return "[]"


_UNSET: Any = _Unset()


class TwitterAPI:
    """A single account (`username`/`password`) that posts, retweets, comments and follows once authenticated.

    Attributes:
        username, password: the account's credentials.
        authenticated: whether `authenticate_twitter` succeeded (or the scenario says so).
        tweets: {tweet id (int): tweet dict}.
        comments: {tweet id: [{"username", "content"}]}; loaded ids stay strings, new ones are ints.
        retweets: {username: [tweet ids]}.
        following_list: the user names followed.
        tweet_counter: the id the next tweet gets.
    """

    username: str
    password: str
    authenticated: bool
    tweets: dict[int, Tweet]
    comments: dict[Any, list[dict[str, Any]]]
    retweets: dict[str, list[Any]]
    following_list: list[Any]
    tweet_counter: int

    def __init__(self, tables: Tables) -> None:
        self._tables = tables
        # upstream's `tags=[]`/`mentions=[]` defaults are one list each that every tweet posted without them
        # shares, and `mention` extends in place: kept per instance, never across instances or samples
        # (docs/bfcl-multi-turn.md#fresh-process-semantics)
        self._default_tags: list[Any] = []
        self._default_mentions: list[Any] = []

    def load_scenario(self, scenario: dict[str, Any], long_context: bool = False) -> None:
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

    def post_tweet(self, content: str, tags: list[str] = _UNSET, mentions: list[str] = _UNSET) -> Tweet:
        if not self.authenticated:
            return _not_authenticated("posting")
        tweet: Tweet = {"id": self.tweet_counter, "username": self.username, "content": content,
                        "tags": self._default_tags if tags is _UNSET else tags,
                        "mentions": self._default_mentions if mentions is _UNSET else mentions}
        self.tweets[self.tweet_counter] = tweet  # stored and returned as the same object
        self.tweet_counter += 1
        return tweet

    def retweet(self, tweet_id: int) -> dict[str, str]:
        if not self.authenticated:
            return _not_authenticated("retweeting")
        if tweet_id not in self.tweets:
            return _no_tweet(tweet_id)
        mine = self.retweets.setdefault(self.username, [])
        if tweet_id in mine:
            return {"retweet_status": "Already retweeted"}
        mine.append(tweet_id)
        return {"retweet_status": "Successfully retweeted"}

    def comment(self, tweet_id: int, comment_content: str) -> dict[str, str]:
        if not self.authenticated:
            return _not_authenticated("commenting")
        if tweet_id not in self.tweets:
            return _no_tweet(tweet_id)
        self.comments.setdefault(tweet_id, []).append({"username": self.username, "content": comment_content})
        return {"comment_status": "Comment added successfully"}

    def mention(self, tweet_id: int, mentioned_usernames: list[str]) -> dict[str, str]:
        if tweet_id not in self.tweets:  # no authentication asked, as upstream
            return _no_tweet(tweet_id)
        self.tweets[tweet_id]["mentions"].extend(mentioned_usernames)  # in place: a shared default list too
        return {"mention_status": "Users mentioned successfully"}

    def follow_user(self, username_to_follow: str) -> dict[str, JSONValue]:
        if not self.authenticated:
            return _not_authenticated("following")
        if username_to_follow in self.following_list:
            return {"follow_status": False}
        self.following_list.append(username_to_follow)
        return {"follow_status": True}

    def list_all_following(self) -> dict[str, Any]:
        if not self.authenticated:
            return _not_authenticated("listing following")
        return {"following_list": self.following_list}

    def unfollow_user(self, username_to_unfollow: str) -> dict[str, JSONValue]:
        if not self.authenticated:
            return _not_authenticated("unfollowing")
        if username_to_unfollow not in self.following_list:
            return {"unfollow_status": False}
        self.following_list.remove(username_to_unfollow)
        return {"unfollow_status": True}

    def get_tweet(self, tweet_id: int) -> Tweet:
        if tweet_id not in self.tweets:
            return _no_tweet(tweet_id)
        return self.tweets[tweet_id]

    def get_user_tweets(self, username: str) -> list[Tweet]:
        return [tweet for tweet in self.tweets.values() if tweet["username"] == username]

    def search_tweets(self, keyword: str) -> list[Tweet]:
        # per tweet, content first, then the tags: an odd keyword fails only when a tweet is looked at
        return [tweet for tweet in self.tweets.values()
                if _lower(keyword) in _lower(tweet["content"])
                or _lower(keyword) in [_lower(tag) for tag in tweet["tags"]]]

    def get_tweet_comments(self, tweet_id: int) -> Any:  # the stored list, or an error dict
        if tweet_id not in self.tweets:
            return _no_tweet(tweet_id)
        return self.comments.get(tweet_id, [])

    def get_user_stats(self, username: str) -> dict[str, int]:
        return {"tweet_count": len(self.get_user_tweets(username)),
                "following_count": len(self.following_list) if username == self.username else 0,
                "retweet_count": len(self.retweets.get(username, []))}


def _lower(text: Any) -> Any:  # a value of the scenario or of the call, of any type: `.lower()` raises as upstream's
    return text.lower()


def _not_authenticated(action: str) -> dict[str, Any]:
    return {"error": f"User not authenticated. Please authenticate before {action}."}


def _no_tweet(tweet_id: object) -> dict[str, Any]:
    return {"error": f"Tweet with ID {tweet_id} not found."}
