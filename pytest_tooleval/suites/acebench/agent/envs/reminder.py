"""ReminderApi: three stored reminders, capacity six (acebench-agent §3.3)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from .base import BaseApi, is_false, lowered_in, with_text

_TODO_EN = (
    'First, help Frank place a food delivery order at "Hema Fresh," ordering two "Fresh Gift Packs." Then, send '
    'a message to Frank saying, "The price of the purchased goods is () yuan." Replace the parentheses with the '
    "actual amount, keeping one decimal place."
)
_TODO_ZH = (
    '首先帮Frank在"盒马生鲜"点外卖，需要定两个"生鲜大礼包"，再发短信告诉Frank：'
    '"购买商品的价格是()元"。要把括号换成实际金额，保留一位小数。'
)

# (key, reminder_id, title, description, time); titles are English in both languages.
_REMINDERS = (
    (1, 1001, "Doctor's Appointment", "Visit Dr. Smith for a checkup.", "2024-07-15 09:30"),
    (2, 1002, "Team Meeting", "Monthly project review with the team.", "2024-07-17 11:00"),
    (3, 1003, "To-do list", None, "2024-07-16 11:00"),
)


class ReminderApi(BaseApi):
    API_METHODS = (*BaseApi.API_METHODS, "view_reminder_by_title", "add_reminder", "delete_reminder",
                   "view_all_reminders")
    # ACEBench quirk: only the zh class has these two; in en they behave as unknown functions (§3.3).
    LANGUAGE_METHODS: ClassVar[Mapping[str, tuple[str, ...]]] = {"zh": ("mark_as_notified", "search_reminders")}
    TEXT = with_text(BaseApi.TEXT, {
        "en": {
            "view_logged_out": "The device is not logged in, so you cannot view notifications",
            "no_title": "No reminder found with the title '{title}'.",
            "add_logged_out": "Device not logged in. Unable to add a new reminder.",
            "full": "Reminder capacity is full. Unable to add a new reminder.",
            "added": "Reminder '{title}' was successfully added.",
            "delete_logged_out": "Device not logged in. Unable to delete the specified reminder.",
            "unknown_id": "Reminder ID does not exist.",
            "deleted": "Reminder ID {reminder_id} was successfully deleted.",
            "none": "No reminders found.",
        },
        "zh": {
            "view_logged_out": "device未登录，无法查看提醒",
            "no_title": "没有找到标题为 '{title}' 的提醒",
            "add_logged_out": "device未登录，无法添加一个新的提醒",
            "full": "提醒容量已满，无法添加新的提醒",
            "added": "提醒 '{title}' 已成功添加",
            "delete_logged_out": "device未登录，无法删除指定的提醒",
            "unknown_id": "提醒ID不存在",
            "deleted": "提醒ID {reminder_id} 已成功删除",
            "none": "没有任何提醒",
            "notified": "提醒ID {reminder_id} 已标记为已通知",
            "no_keyword": "没有找到包含该关键词的提醒",
        },
    })

    def __init__(self, language: str = "en") -> None:
        super().__init__(language)
        self.max_capacity = 6
        todo = _TODO_ZH if language == "zh" else _TODO_EN
        self.reminder_list: dict[object, dict[str, object]] = {
            key: {"reminder_id": rid, "title": title, "description": text or todo, "time": when, "notified": False}
            for key, rid, title, text, when in _REMINDERS
        }
        # New reminders get key == reminder_id == 4, 5, ...; the stored ones are keyed 1-3 (§11.2).
        self.reminder_id_counter = 3

    def view_reminder_by_title(self, title: object) -> dict[str, object]:
        if is_false(self.logged_in):
            return self._fail("view_logged_out")
        for reminder in self.reminder_list.values():
            if reminder["title"] == title:
                return {"status": True, "reminder": reminder}
        return self._fail("no_title", title=title)

    def add_reminder(self, title: object, description: object, time: object) -> dict[str, object]:
        if is_false(self.logged_in):
            return self._fail("add_logged_out")
        if len(self.reminder_list) >= self.max_capacity:
            return self._fail("full")
        self.reminder_id_counter += 1
        rid = self.reminder_id_counter
        # The time is stored as given; nothing parses it.
        self.reminder_list[rid] = {"reminder_id": rid, "title": title, "description": description, "time": time,
                                   "notified": False}
        return self._ok("added", title=title)

    def delete_reminder(self, reminder_id: object) -> dict[str, object]:
        if is_false(self.logged_in):
            return self._fail("delete_logged_out")
        if reminder_id not in self.reminder_list:  # the dict key, not the reminder_id field
            return self._fail("unknown_id")
        del self.reminder_list[reminder_id]
        return self._ok("deleted", reminder_id=reminder_id)

    def view_all_reminders(self) -> dict[str, object]:
        if not self.reminder_list:
            return self._fail("none")
        listing = [{"title": r["title"], "description": r["description"], "time": r["time"],
                    "notified": r["notified"]} for r in self.reminder_list.values()]
        return {"status": True, "reminders": listing}

    def mark_as_notified(self, reminder_id: object) -> dict[str, object]:
        if reminder_id not in self.reminder_list:
            return self._fail("unknown_id")
        self.reminder_list[reminder_id]["notified"] = True
        return self._ok("notified", reminder_id=reminder_id)

    def search_reminders(self, keyword: object) -> dict[str, object]:
        for reminder in self.reminder_list.values():
            if lowered_in(keyword, reminder["title"]) or lowered_in(keyword, reminder["description"]):
                # ACEBench quirk: upstream formats the stored time with .strftime, and no stored time (a string
                # or another literal) has that method, so every match crashes (acebench-agent §3.3).
                raise AttributeError(f"'{type(reminder['time']).__name__}' object has no attribute 'strftime'")
        return self._fail("no_keyword")
