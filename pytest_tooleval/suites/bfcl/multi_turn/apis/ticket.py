"""`TicketAPI`: a support-ticket queue with a logged-in user (docs/bfcl-multi-turn.md#ticketapi)."""

from __future__ import annotations

from collections.abc import Mapping

from .....json_value import JSONValue
from ..tables import Tables

Ticket = dict[str, JSONValue]  # id, title, description, status, priority, created_by[, resolution]
_EDITABLE = ("title", "description", "status", "priority")


class TicketAPI:
    """Tickets in a list, numbered by a counter; most methods act for `current_user`.

    Attributes:
        ticket_queue: the tickets, in creation order (the loaded ones first).
        ticket_counter: the id the next ticket gets.
        current_user: the logged-in user name, or None.
    """

    ticket_queue: list[Ticket]
    ticket_counter: int
    current_user: str | None

    def __init__(self, tables: Tables) -> None:
        self._tables = tables

    def load_scenario(self, scenario: Mapping[str, JSONValue], long_context: bool = False) -> None:
        defaults = self._tables.default_state("TicketAPI")
        for name in ("ticket_queue", "ticket_counter", "current_user"):
            setattr(self, name, scenario.get(name, defaults[name]))

    def create_ticket(self, title: str, description: str = "", priority: int = 1) -> Ticket:
        if not self.current_user:
            return {"error": "User not authenticated. Please log in to create a ticket."}
        # two comparisons, in this order: a non-number fails with the first one's TypeError text
        if priority < 1 or priority > 5:
            return {"error": "Invalid priority. Priority must be between 1 and 5."}
        ticket: Ticket = {"id": self.ticket_counter, "title": title, "description": description, "status": "Open",
                          "priority": priority, "created_by": self.current_user}
        self.ticket_queue.append(ticket)
        self.ticket_counter += 1
        return ticket

    def get_ticket(self, ticket_id: int) -> Ticket:
        found = self._find(ticket_id)
        return found if found else _missing(ticket_id)

    def close_ticket(self, ticket_id: int) -> Ticket:
        return self._set_status(ticket_id, "Closed", "closed", {})

    def resolve_ticket(self, ticket_id: int, resolution: str) -> Ticket:
        return self._set_status(ticket_id, "Resolved", "resolved", {"resolution": resolution})

    def edit_ticket(self, ticket_id: int, updates: dict[str, JSONValue]) -> Ticket:
        found = self._find(ticket_id)
        if not found:
            return _missing(ticket_id)
        # a set, joined in its iteration order: with two or more unknown fields the text depends on
        # PYTHONHASHSEED, as upstream's does (docs/bfcl-multi-turn.md#ticketapi)
        unknown = set(updates.keys()) - set(_EDITABLE)
        if unknown:
            return {"error": f"Invalid fields for update: {', '.join(unknown)}"}
        found.update((key, value) for key, value in updates.items() if value is not None)
        return {"status": f"Ticket {ticket_id} has been updated successfully."}

    def ticket_login(self, username: str, password: str) -> dict[str, bool]:
        if not (username and password):  # any two non-empty values log in
            return {"success": False}
        self.current_user = username
        return {"success": True}

    def ticket_get_login_status(self) -> dict[str, bool]:
        return {"login_status": bool(self.current_user)}

    def logout(self) -> dict[str, bool]:
        if not self.current_user:
            return {"success": False}
        self.current_user = None
        return {"success": True}

    def get_user_tickets(self, status: str | None = None) -> list[Ticket]:
        if not self.current_user:
            return [{"error": "User not authenticated. Please log in to view tickets."}]
        mine = [ticket for ticket in self.ticket_queue if ticket["created_by"] == self.current_user]
        if not status:
            return mine
        # both sides lowered per ticket, the ticket's first: an odd `status` fails only when a ticket is compared
        return [ticket for ticket in mine if _lower(ticket["status"]) == status.lower()]

    def _find(self, ticket_id: object) -> Ticket | None:
        return next((ticket for ticket in self.ticket_queue if ticket["id"] == ticket_id), None)

    def _set_status(self, ticket_id: int, status: str, verb: str, extra: Ticket) -> Ticket:
        found = self._find(ticket_id)
        if not found:
            return _missing(ticket_id)
        if found["status"] == status:
            return {"error": f"Ticket with ID {ticket_id} is already {verb}."}
        found["status"] = status
        found.update(extra)
        return {"status": f"Ticket {ticket_id} has been {verb} successfully."}


def _lower(value: JSONValue) -> str:
    """`value.lower()`; for a value that is not a string, the AttributeError CPython raises for it."""
    if isinstance(value, str):
        return value.lower()
    raise AttributeError(f"'{type(value).__name__}' object has no attribute 'lower'")


def _missing(ticket_id: object) -> Ticket:
    return {"error": f"Ticket with ID {ticket_id} not found."}
