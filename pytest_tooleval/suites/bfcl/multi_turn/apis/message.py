"""`MessageAPI`: a workspace's users and the messages sent in it (docs/bfcl-multi-turn.md#messageapi)."""

from __future__ import annotations

import random
from collections.abc import Mapping

from .....json_value import JSONValue
from ..tables import Tables

Outcome = dict[str, object]  # a result: statuses, errors, lists of messages

_SEED = 200191  # upstream's seed when the scenario names none (no sample does)
_ID_RANGE = (10000, 99999)


class MessageAPI:
    """Users by name and id, one inbox of `{receiver id: text}` entries, and a logged-in user.

    Attributes:
        generated_ids: the message ids drawn so far (a set).
        user_count: how many users there are; numbers the next added contact's id.
        user_map: {user name: user id}.
        inbox: every message sent, in order, each a one-entry dict {receiver id: text}.
        message_count: how many messages there are.
        current_user: the logged-in user id, or None.
    """

    generated_ids: set[int]
    user_count: int
    user_map: dict[str, str]
    inbox: list[dict[str, str]]
    message_count: int
    current_user: str | None

    def __init__(self, tables: Tables) -> None:
        self._tables = tables
        self._random = random.Random(_SEED)

    def load_scenario(self, scenario: Mapping[str, JSONValue], long_context: bool = False) -> None:
        defaults = self._tables.default_state("MessageAPI")
        seed = scenario.get("random_seed", _SEED)
        if isinstance(seed, (list, dict)):  # no sample names a seed; upstream's Random refuses these too
            raise TypeError(f"MessageAPI: {seed!r} is not a random seed")
        self._random = random.Random(seed)
        for name in ("generated_ids", "user_count", "user_map", "inbox", "message_count", "current_user"):
            setattr(self, name, scenario.get(name, defaults[name]))

    def list_users(self) -> Outcome:
        return {"user_list": list(self.user_map)}

    def get_user_id(self, user: str) -> Outcome:
        if user not in self.user_map:
            return {"error": f"User '{user}' not found in the workspace."}
        return {"user_id": self.user_map[user]}

    def message_login(self, user_id: str) -> Outcome:
        if user_id not in list(self.user_map.values()):
            return {"login_status": False, "message": f"User ID '{user_id}' not found."}
        self.current_user = user_id
        return {"login_status": True, "message": f"User '{user_id}' logged in successfully."}

    def message_get_login_status(self) -> dict[str, bool]:
        return {"login_status": bool(self.current_user)}

    def send_message(self, receiver_id: str, message: str) -> Outcome:
        if not self.current_user:
            return _logged_out()
        if receiver_id not in self.user_map.values():
            return {"error": f"Receiver ID '{receiver_id}' not found."}
        new_id = self._new_id()
        self.inbox.append({receiver_id: message})
        self.message_count += 1
        return {"sent_status": True, "message_id": {"new_id": new_id},
                "message": f"Message sent to '{receiver_id}' successfully."}

    def delete_message(self, receiver_id: str) -> Outcome:
        if not self.current_user:
            return _logged_out()
        for entry in reversed(list(self.inbox)):
            receiver = _receiver(entry)
            if receiver == receiver_id:
                # `remove` drops the first entry *equal* to the last match, which may be an earlier twin
                # (docs/bfcl-multi-turn.md#messageapi)
                self.inbox.remove(entry)
                return {"deleted_status": True, "receiver_id": receiver,
                        "message": f"Receiver {receiver_id}'s latest message deleted successfully."}
        return {"error": f"Receiver ID {receiver_id} not found."}

    def view_messages_sent(self) -> Outcome:
        if not self.current_user:
            return _logged_out()
        grouped: dict[str, list[str]] = {}
        for entry in self.inbox:  # every message, whoever sent it, as upstream
            receiver, text = _first(entry)
            grouped.setdefault(receiver, []).append(text)
        return {"messages": grouped}

    def add_contact(self, user_name: str) -> Outcome:
        if user_name in self.user_map:
            return {"error": f"User name '{user_name}' already exists."}
        self.user_count += 1  # before the id check: a refused contact still counts (docs/bfcl-multi-turn.md#messageapi)
        user_id = f"USR{str(self.user_count).zfill(3)}"
        if user_id in self.user_map.values():
            return {"error": f"User ID '{user_id}' already exists."}
        self.user_map[user_name] = user_id
        return {"added_status": True, "user_id": user_id, "message": f"Contact '{user_name}' added successfully."}

    def search_messages(self, keyword: str) -> Outcome:
        if not self.current_user:
            return _logged_out()
        wanted = keyword.lower()
        found: list[dict[str, str]] = []
        for entry in self.inbox:
            receiver, text = _first(entry)
            if wanted in text.lower():
                found.append({"receiver_id": receiver, "message": text})
        return {"results": found}

    def get_message_stats(self) -> Outcome:
        if not self.current_user:
            return _logged_out()
        receivers = set()
        for entry in self.inbox:
            receivers.add(_receiver(entry))
        return {"stats": {"received_count": len(self.inbox), "total_contacts": len(receivers)}}

    def _new_id(self) -> int:
        """A message id not drawn before (each draw consumes the generator, as upstream's)."""
        while True:
            new_id = self._random.randint(*_ID_RANGE)
            if new_id not in self.generated_ids:
                self.generated_ids.add(new_id)
                return new_id


def _first(entry: dict[str, str]) -> tuple[str, str]:
    """An inbox entry's one (receiver, text) pair; IndexError for an empty entry, as upstream's."""
    return list(entry.items())[0]  # noqa: RUF015  (next(iter(...)) would raise StopIteration, not IndexError)


def _receiver(entry: dict[str, str]) -> str:
    return _first(entry)[0]


def _logged_out() -> Outcome:
    return {"error": "No user is currently logged in."}
