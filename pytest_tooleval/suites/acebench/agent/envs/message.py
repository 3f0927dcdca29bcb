"""MessageApi: six users and an inbox that starts full (acebench-agent §3.2)."""

from __future__ import annotations

from datetime import datetime
from typing import TypedDict

from .base import BaseApi, is_false, lowered_in, with_text


class _User(TypedDict):
    user_id: str
    phone_number: str
    occupation: str


class _SentMessage(TypedDict):
    sender_id: str
    receiver_id: str
    message: object  # whatever the model sent


class _Message(_SentMessage, total=False):
    time: str  # ACEBench quirk: only the initial messages have a time (acebench-agent §11.1)


_USERS = (
    ("Eve", "USR100", "123-456-7890", "Software Engineer"),
    ("Frank", "USR101", "234-567-8901", "Data Scientist"),
    ("Grace", "USR102", "345-678-9012", "Product Manager"),
    ("Helen", "USR103", "456-789-0123", "UX Designer"),
    ("Isaac", "USR104", "567-890-1234", "DevOps Engineer"),
    ("Jack", "USR105", "678-901-2345", "Marketing Specialist"),
)

# (id, sender, receiver, time, en text, zh text); ids 1, 4, 5 and 6 read the same in both languages.
_INBOX = (
    (1, "USR100", "USR101", "2024-06-09",
     "Hey Frank, don't forget about our meeting on 2024-06-11 at 4 PM in Conference Room 1.", None),
    (2, "USR101", "USR102", "2024-03-09",
     'Can you help me order a "Margherita Pizza" delivery? The merchant is Domino\'s.',
     '你能帮我点一个"玛格丽特披萨"的外卖吗,商家是达美乐。'),
    (3, "USR102", "USR103", "2023-12-05",
     "Please check the milk tea delivery options available from Heytea and purchase a cheaper milk tea for "
     'me. After making the purchase, remember to reply to me with "Already bought."',
     "帮我查一些喜茶有哪些奶茶外卖，买一杯便宜些的奶茶。买完以后记得回复我,回复的内容是（已经买好了）"),
    (4, "USR103", "USR102", "2024-09-09", "No problem Helen, I can assist you.", None),
    (5, "USR104", "USR105", "2024-06-06", "Isaac, are you available for a call?", None),
    (6, "USR105", "USR104", "2024-01-15", "Yes Jack, let's do it in 30 minutes.", None),
)

_DATE = "%Y-%m-%d"


class MessageApi(BaseApi):
    API_METHODS = (
        *BaseApi.API_METHODS,
        "send_message",
        "delete_message",
        "view_messages_between_users",
        "search_messages",
        "get_all_message_times_with_ids",
        "get_latest_message_id",
        "get_earliest_message_id",
    )
    TEXT = with_text(BaseApi.TEXT, {
        "en": {
            "send_logged_out": "Device not logged in, unable to send message",
            "send_no_wifi": "Wi-Fi is turned off, cannot send messages at this time",
            "inbox_full": "Inbox capacity is full. You need to ask the user which message to delete.",
            "unknown_party": "Sender or receiver does not exist",
            "sent": "Message successfully sent to {receiver}.",
            "delete_logged_out": "Device not logged in, unable to delete message",
            "unknown_id": "Message ID does not exist",
            "deleted": "Message ID {message_id} has been successfully deleted.",
            "view_logged_out": "Device not logged in, unable to view message information",
            "unknown_sender": "Sender does not exist",
            "unknown_receiver": "Receiver does not exist",
            "none_between": "No related message records found",
            "unknown_user": "User does not exist",
            "no_keyword": "No messages found containing the keyword",
            "times_logged_out": "Device not logged in, unable to retrieve all message times and their "
                                "corresponding message IDs.",
            "latest_logged_out": "Device not logged in, unable to retrieve the latest sent message ID.",
            "earliest_logged_out": "Device not logged in, unable to retrieve the earliest sent message ID.",
            "empty": "No message records found",
            "latest": "The latest message ID is {message_id}",
            "earliest": "The earliest message ID is {message_id}",
        },
        "zh": {
            "send_logged_out": "device未登录，无法发送短信",
            "send_no_wifi": "wifi关闭，此时不能发送信息",
            "inbox_full": "内存容量不够了，你需要询问user删除哪一条短信。",
            "unknown_party": "发送者或接收者不存在",
            "sent": "短信成功发送给{receiver}。",
            "delete_logged_out": "device未登录，无法删除短信",
            "unknown_id": "短信ID不存在",
            "deleted": "短信ID {message_id} 已成功删除。",
            "view_logged_out": "device未登录，无法查看短信信息",
            "unknown_sender": "发送者不存在",
            "unknown_receiver": "接收者不存在",
            "none_between": "没有找到相关的短信记录",
            "unknown_user": "用户不存在",
            "no_keyword": "没有找到包含关键词的短信",
            "times_logged_out": "device未登录，获取所有短信的时间以及对应的短信编号。",
            "latest_logged_out": "device未登录，无法获取最新发送的短信ID。",
            "earliest_logged_out": "device未登录，无法获取最早发送的短信ID",
            "empty": "短信记录为空",
            "latest": "最新的短信ID是 {message_id}",
            "earliest": "最早的短信ID是 {message_id}",
        },
    })

    def __init__(self, language: str = "en") -> None:
        super().__init__(language)
        self.max_capacity = 6
        self.user_list: dict[str, _User] = {
            name: {"user_id": uid, "phone_number": phone, "occupation": job} for name, uid, phone, job in _USERS
        }
        self.inbox: dict[object, _Message] = {
            mid: {"sender_id": src, "receiver_id": dst, "message": zh if (zh and language == "zh") else en,
                  "time": when}
            for mid, src, dst, when, en, zh in _INBOX
        }
        # Ids only grow: the first sent message is 7 even after deletions (acebench-agent §11.2).
        self.message_id_counter = 6

    def send_message(self, sender_name: object, receiver_name: object, message: object) -> dict[str, object]:
        # Checks in upstream order: login, Wi-Fi, capacity, then the names.
        if is_false(self.logged_in):
            return self._fail("send_logged_out")
        if is_false(self.wifi):
            return self._fail("send_no_wifi")
        if len(self.inbox) >= self.max_capacity:
            return self._fail("inbox_full")
        if sender_name not in self.user_list or receiver_name not in self.user_list:
            return self._fail("unknown_party")
        sender_id = self.user_list[sender_name]["user_id"]
        receiver_id = self.user_list[receiver_name]["user_id"]
        self.message_id_counter += 1
        # ACEBench quirk: a sent message has no "time" key, which later breaks latest/earliest (§11.1).
        self.inbox[self.message_id_counter] = {"sender_id": sender_id, "receiver_id": receiver_id, "message": message}
        return self._ok("sent", receiver=receiver_name)

    def delete_message(self, message_id: object) -> dict[str, object]:
        if is_false(self.logged_in):
            return self._fail("delete_logged_out")
        if message_id not in self.inbox:  # exact key lookup: "4" is not 4, but 4.0 and True match ints
            return self._fail("unknown_id")
        del self.inbox[message_id]
        return self._ok("deleted", message_id=message_id)

    def view_messages_between_users(self, sender_name: object, receiver_name: object) -> dict[str, object]:
        if is_false(self.logged_in):
            return self._fail("view_logged_out")
        if sender_name not in self.user_list:
            return self._fail("unknown_sender")
        if receiver_name not in self.user_list:
            return self._fail("unknown_receiver")
        sender_id = self.user_list[sender_name]["user_id"]
        receiver_id = self.user_list[receiver_name]["user_id"]
        found = [
            {"id": mid, "sender": sender_name, "receiver": receiver_name, "message": entry["message"]}
            for mid, entry in self.inbox.items()
            if entry["sender_id"] == sender_id and entry["receiver_id"] == receiver_id
        ]
        if not found:
            return self._fail("none_between")
        return {"status": True, "messages": found}

    def search_messages(self, user_name: object, keyword: object) -> dict[str, object]:
        if user_name not in self.user_list:
            return self._fail("unknown_user")
        user_id = self.user_list[user_name]["user_id"]
        found = []
        for mid, entry in self.inbox.items():
            involved = entry["sender_id"] == user_id or entry["receiver_id"] == user_id
            # Same operand order as upstream, so a non-string keyword or text fails the same way.
            if involved and lowered_in(keyword, entry["message"]):
                found.append({"id": mid, "sender_id": entry["sender_id"], "receiver_id": entry["receiver_id"],
                              "message": entry["message"]})
        if not found:
            return self._fail("no_keyword")
        return {"status": True, "messages": found}

    def get_all_message_times_with_ids(self) -> dict[str, object] | dict[object, str]:
        if is_false(self.logged_in):
            return self._fail("times_logged_out")
        return {mid: entry["time"] for mid, entry in self.inbox.items()}

    def get_latest_message_id(self) -> dict[str, object]:
        if is_false(self.logged_in):
            return self._fail("latest_logged_out")
        return self._extreme_id("latest", later=True)

    def get_earliest_message_id(self) -> dict[str, object]:
        if is_false(self.logged_in):
            return self._fail("earliest_logged_out")
        return self._extreme_id("earliest", later=False)

    def _extreme_id(self, key: str, later: bool) -> dict[str, object]:
        if not self.inbox:
            return self._fail("empty")
        best_id: object = None
        best_time: datetime | None = None
        for mid, entry in self.inbox.items():
            when = datetime.strptime(entry["time"], _DATE)  # KeyError 'time' once a sent message exists
            # The first strict maximum (or minimum) in inbox order wins.
            if best_time is None or (when > best_time if later else when < best_time):
                best_time, best_id = when, mid
        return {"status": True, "message": self._text(key, message_id=best_id), "message_id": best_id}
