"""`TravelAPI`: a travel account's token, credit cards, bookings and budget (docs/bfcl-multi-turn.md#travelapi)."""

from __future__ import annotations

import copy
import random
from collections.abc import Mapping
from datetime import date, datetime

from .....json_value import JSONValue
from ..tables import Tables

Record = dict[str, object]  # a card or a booking
Outcome = dict[str, object]  # a result: statuses, errors, the stored dicts themselves

_SEED = 141053  # upstream's seed when the scenario names none (no sample does)
_STATE = ("credit_card_list", "booking_record", "access_token", "token_type", "token_expires_in", "token_scope",
          "user_first_name", "user_last_name", "budget_limit")
_CLASS_FACTORS = {"economy": 1, "business": 2, "first": 5}
_INVOICE_FIELDS = ("travel_date", "travel_from", "travel_to", "travel_class", "travel_cost", "transaction_id")
_SUPPORT_REPLY = ("Thank you for contacting customer support. Your message has been received and we will get back "
                  "to you shortly.")


class TravelAPI:
    """An access token (with a lifetime counter that is never counted down), cards and bookings by id, a budget.

    Attributes:
        credit_card_list: {card id: card}; cards carry a `balance` that bookings debit.
        booking_record: {booking id: booking}.
        access_token, token_type, token_expires_in, token_scope: the token `authenticate_travel` issues.
        user_first_name, user_last_name: the traveller the token was issued for.
        budget_limit: a floor under a card's balance for booking (None: none).
        long_context: whether the long-context cards and bookings were added and results are the long ones.
    """

    credit_card_list: dict[object, Record]
    booking_record: dict[object, Record]
    access_token: object
    token_type: object
    token_expires_in: object
    token_scope: object
    user_first_name: object
    user_last_name: object
    budget_limit: object
    long_context: bool

    def __init__(self, tables: Tables, today: date | None = None) -> None:
        """`today`: the date `verify_traveler_information` computes ages on (None: the local date at the call,
        as upstream; the differential test pins it)."""
        self._tables = tables
        self._today = today
        self._random = random.Random(_SEED)
        self._flight_cost_lookup: dict[str, dict[str, float]] = {}  # the last costs quoted, for book_flight

    def load_scenario(self, scenario: Mapping[str, JSONValue], long_context: bool = False) -> None:
        defaults = self._tables.default_state("TravelAPI")
        seed = scenario.get("random_seed", _SEED)
        if isinstance(seed, (list, dict)):  # no sample names a seed; upstream's Random refuses these too
            raise TypeError(f"TravelAPI: {seed!r} is not a random seed")
        self._random = random.Random(seed)
        for name in _STATE:  # other scenario keys (current_location, ...) are ignored, as upstream
            setattr(self, name, scenario.get(name, defaults[name]))
        self.long_context = long_context
        if long_context:
            # upstream inserts its module's own dicts, so that a debit leaks into later samples; each instance
            # gets copies here (docs/bfcl-multi-turn.md#fresh-process-semantics)
            for target, selector in ((self.credit_card_list, "CREDIT_CARD_EXTENSION"),
                                     (self.booking_record, "BOOKING_RECORD_EXTENSION")):
                extension = self._tables.value(f"long_context.{selector}")
                assert isinstance(extension, dict)
                for key, entry in extension.items():
                    if key not in target:
                        target[key] = entry

    def authenticate_travel(self, client_id: str, client_secret: str, refresh_token: str, grant_type: str,
                            user_first_name: str, user_last_name: str) -> Outcome:
        # no credential is checked; one draw
        self.token_expires_in = 2
        self.access_token = str(self._random.randint(100000, 999999))
        self.token_type = "Bearer"
        self.token_scope = grant_type
        self.user_first_name = user_first_name
        self.user_last_name = user_last_name
        return {"expires_in": 2, "access_token": self.access_token, "token_type": "Bearer", "scope": grant_type}

    def travel_get_login_status(self) -> dict[str, bool]:
        return {"status": not (self.token_expires_in is None or self.token_expires_in == 0)}

    def get_budget_fiscal_year(self, lastModifiedAfter: str | None = None,  # upstream's parameter names
                               includeRemoved: str | None = None) -> dict[str, str]:
        return {"budget_fiscal_year": "2018"}

    def register_credit_card(self, access_token: str, card_number: str, expiration_date: str, cardholder_name: str,
                             card_verification_number: int) -> Outcome:
        if self.token_expires_in is None:
            return {"error": "Token not initialized"}
        if self.token_expires_in == 0:
            return {"error": "Token expired"}
        if access_token != self.access_token:
            return {"error": "Invalid access token"}
        if card_number in self.credit_card_list:  # the number looked up among the card *ids*, as upstream
            return {"error": "Card already registered"}
        card_id = str(self._random.randint(100000000000, 999999999999))  # two draws: the id, then the balance
        self.credit_card_list[card_id] = {"card_number": card_number, "expiration_date": expiration_date,
                                          "cardholder_name": cardholder_name,
                                          "card_verification_number": card_verification_number,
                                          "balance": self._random.randint(10000, 99999)}
        return {"card_id": card_id}

    def get_flight_cost(self, travel_from: str, travel_to: str, travel_date: str, travel_class: str) -> Outcome:
        routes = self._routes()
        if (travel_from, travel_to) not in routes:
            raise ValueError("No available route for the given airports.")
        base = routes[(travel_from, travel_to)]
        # compared with ==, not looked up: an unhashable class is just not one of them
        factor = next((value for name, value in _CLASS_FACTORS.items() if travel_class == name), None)
        if factor is None:
            raise ValueError("Invalid travel class. Options are: economy, business, first.")
        # doubled when the date's digits add up to an even number
        multiplier = 2 if sum(int(char) for char in travel_date if char.isdigit()) % 2 == 0 else 1
        if self.long_context:  # every route's cost, all kept for book_flight
            self._flight_cost_lookup = {}
            costs = []
            for (start, end), route_base in routes.items():
                cost = float(route_base * factor * multiplier)
                self._flight_cost_lookup[_cost_key(start, end, travel_class, travel_date)] = {"cost": cost}
                costs.append(cost)
            return {"travel_cost_list": costs}
        cost = float(base * factor * multiplier)
        self._flight_cost_lookup = {_cost_key(travel_from, travel_to, travel_class, travel_date): {"cost": cost}}
        return {"travel_cost_list": [cost]}

    def get_credit_card_balance(self, access_token: str, card_id: str) -> Outcome:
        if self.token_expires_in == 0:
            return {"error": "Token expired"}
        if access_token != self.access_token:
            return {"error": "Invalid access token"}
        if card_id not in self.credit_card_list:
            return {"error": "Card not registered. Here are a list of card_id's: " + str(list(self.credit_card_list))}
        return {"card_balance": self.credit_card_list[card_id]["balance"]}

    def book_flight(self, access_token: str, card_id: str, travel_date: str, travel_from: str, travel_to: str,
                    travel_class: str) -> Outcome:
        refused = self._booking_refusal(access_token, card_id, travel_date, travel_from, travel_to, travel_class)
        if refused:
            return {"booking_status": False, "error": refused}
        try:
            self.get_flight_cost(travel_from=travel_from, travel_to=travel_to, travel_date=travel_date,
                                 travel_class=travel_class)
        except ValueError as exc:  # an unknown route, or a date digit int() refuses
            return {"booking_status": False, "error": str(exc)}
        quoted = self._flight_cost_lookup.get(_cost_key(travel_from, travel_to, travel_class, travel_date))
        if quoted is None:
            return {"booking_status": False, "error": "No available route for the given parameters"}
        cost = quoted["cost"]
        card = self.credit_card_list[card_id]
        if card["balance"] < cost:  # type: ignore[operator]  # a balance is a number, as upstream assumes
            return {"booking_status": False, "error": "Insufficient funds"}
        if self.budget_limit is not None and card["balance"] < self.budget_limit:  # type: ignore[operator]
            return {"booking_status": False, "error": "Balance is less than budget limit"}
        card["balance"] -= cost  # type: ignore[operator]
        booking_id = str(self._random.randint(1000000, 9999999))  # two draws: the booking, then the transaction
        transaction_id = str(self._random.randint(10000000, 99999999))
        self.booking_record[booking_id] = {"card_id": card_id, "travel_date": travel_date, "travel_from": travel_from,
                                           "travel_to": travel_to, "travel_class": travel_class,
                                           "travel_cost": cost, "transaction_id": transaction_id}
        return {"booking_id": booking_id, "transaction_id": transaction_id, "booking_status": True,
                "booking_history": self.booking_record if self.long_context else {}}

    def retrieve_invoice(self, access_token: str, booking_id: str | None = None,
                         insurance_id: str | None = None) -> Outcome:
        if self.token_expires_in == 0:
            return {"error": "Token expired"}
        if access_token != self.access_token:
            return {"error": "Invalid access token"}
        if booking_id not in self.booking_record:
            return {"error": "Booking not found"}
        booking = self.booking_record[booking_id]
        invoice: Outcome = {"booking_id": booking_id}
        for field in _INVOICE_FIELDS:
            invoice[field] = booking[field]
        return {"invoice": invoice}

    def get_booking_history(self, access_token: str) -> Outcome:
        if self.token_expires_in == 0:
            return {"error": "Token expired"}
        if access_token != self.access_token:
            return {"error": "Invalid access token"}
        return {"booking_history": copy.deepcopy(self.booking_record)}

    def list_all_airports(self) -> list[str]:
        airports = self._tables.value("travel_booking.TravelAPI.list_all_airports.return")
        assert isinstance(airports, list)
        return airports

    def cancel_booking(self, access_token: str, booking_id: str) -> Outcome:
        if self.token_expires_in == 0:
            return {"cancel_status": False, "error": "Token expired"}
        if access_token != self.access_token:
            return {"cancel_status": False, "error": "Invalid access token"}
        if booking_id not in self.booking_record:
            return {"cancel_status": False, "error": "Booking not found"}
        booking = self.booking_record[booking_id]
        card_id, cost = booking["card_id"], booking["travel_cost"]
        self.credit_card_list[card_id]["balance"] += cost  # type: ignore[operator]  # refunded to the card
        del self.booking_record[booking_id]
        return {"cancel_status": True}

    def compute_exchange_rate(self, base_currency: str, target_currency: str, value: float) -> Outcome:
        rates = self._tables.value("travel_booking.TravelAPI.compute_exchange_rate.exchange_rates")
        assert isinstance(rates, dict)
        for (source, target), rate in rates.items():  # the first pair that matches, in either direction
            if base_currency == source and target_currency == target:
                return {"exchanged_value": float(value * rate)}
            if base_currency == target and target_currency == source:
                return {"exchanged_value": round(value / rate, 2)}
        raise ValueError("No available exchange rate for the given currencies.")

    def verify_traveler_information(self, first_name: str, last_name: str, date_of_birth: str,
                                    passport_number: str) -> Outcome:
        if self.user_first_name != first_name or self.user_last_name != last_name:
            return {"verification_status": False,
                    "verification_failure": "Cannot book flight information for another user."
                                            f"Expected {self.user_first_name} {self.user_last_name}, "
                                            f"got {first_name} {last_name}"}
        try:
            born = datetime.strptime(date_of_birth, "%Y-%m-%d")
        except ValueError:
            return {"verification_status": False,
                    "verification_failure": "Invalid date of birth format. Please use YYYY-MM-DD."}
        today = self._today if self._today is not None else date.today()
        age = today.year - born.year - ((today.month, today.day) < (born.month, born.day))
        if age < 18:
            return {"verification_status": False, "verification_failure": "Traveler must be at least 18 years old."}
        if not passport_number.startswith("US"):
            return {"verification_status": False,
                    "verification_failure": "Passport must be issued by the United States."}
        return {"verification_status": True}

    def set_budget_limit(self, access_token: str, budget_limit: float) -> Outcome:
        if self.token_expires_in == 0:
            return {"error": "Token expired"}
        if access_token != self.access_token:
            return {"error": "Invalid access token"}
        self.budget_limit = float(budget_limit)
        return {"budget_limit": self.budget_limit}

    def get_nearest_airport_by_city(self, location: str) -> Outcome:
        airports = self._tables.value("travel_booking.TravelAPI.get_nearest_airport_by_city.airport_map")
        assert isinstance(airports, dict)
        return {"nearest_airport": airports.get(location, "Unknown")}

    def purchase_insurance(self, access_token: str, insurance_type: str, booking_id: str, insurance_cost: float,
                           card_id: str) -> Outcome:
        if self.token_expires_in == 0:
            return {"insurance_status": False, "error": "Token expired"}
        if access_token != self.access_token:
            return {"insurance_status": False, "error": "Invalid access token"}
        # the budget before the booking and the card, as upstream
        if self.budget_limit is not None and self.budget_limit < insurance_cost:  # type: ignore[operator]
            return {"insurance_status": False, "error": "Exceeded budget limit"}
        if booking_id not in self.booking_record:
            return {"insurance_status": False, "error": "Booking not found"}
        if card_id not in self.credit_card_list:
            return {"insurance_status": False, "error": "Credit card not registered"}
        self.credit_card_list[card_id]["balance"] -= insurance_cost  # type: ignore[operator]
        # one draw; the insurance itself is recorded nowhere
        return {"insurance_id": str(self._random.randint(100000000, 999999999)), "insurance_status": True}

    def contact_customer_support(self, booking_id: str, message: str) -> Outcome:
        if booking_id not in self.booking_record:
            return {"error": "Booking not found"}
        return {"customer_support_message": _SUPPORT_REPLY}

    def get_all_credit_cards(self) -> Outcome:
        return {"credit_card_list": self.credit_card_list}  # the live dict

    def _routes(self) -> dict[tuple[str, str], int]:
        routes = self._tables.value("travel_booking.TravelAPI.get_flight_cost.base_costs")
        assert isinstance(routes, dict)
        return routes

    def _booking_refusal(self, access_token: object, card_id: object, travel_date: object, travel_from: object,
                         travel_to: object, travel_class: object) -> str:
        """Why book_flight refuses before quoting, in upstream's order ("" when it does not)."""
        if self.token_expires_in == 0:
            return "Token expired"
        if access_token != self.access_token:
            return "Invalid access token"
        if card_id not in self.credit_card_list:
            return "Card not registered"
        if "balance" not in self.credit_card_list[card_id]:
            return "Balance not found"
        airports = self.list_all_airports()
        if travel_from not in airports:
            return f"Invalid departure airport code: {travel_from}"
        if travel_to not in airports:
            return f"Invalid destination airport code: {travel_to}"
        try:
            datetime.strptime(travel_date, "%Y-%m-%d")  # type: ignore[arg-type]  # a non-string raises TypeError
        except ValueError:
            return "Invalid date format. Use YYYY-MM-DD."
        classes = self._tables.value("travel_booking.TravelAPI.book_flight.valid_classes")
        assert isinstance(classes, set)
        if travel_class not in classes:
            # a set in the text: its order follows PYTHONHASHSEED, as upstream's (docs/bfcl-multi-turn.md#travelapi)
            return f"Invalid travel class. Must be one of {classes}"
        return ""


def _cost_key(travel_from: object, travel_to: object, travel_class: object, travel_date: object) -> str:
    return f"{travel_from}|{travel_to}|{travel_class}|{travel_date}"
