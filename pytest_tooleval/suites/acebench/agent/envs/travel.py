"""Travel: three users, eleven flights and four reservations (acebench-agent §3.5)."""

from __future__ import annotations

import operator
from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import ClassVar, Literal, TypedDict, TypeVar

from ...plain import add_to, greater, item, larger, less, negative
from .base import Scenario

_CITY_ZH = {"Beijing": "北京", "Shanghai": "上海", "Nanjing": "南京", "Shenzhen": "深圳", "Xiamen": "厦门",
            "Chengdu": "成都", "Fuzhou": "福州"}
_CABINS = {"en": ("Economy Class", "Business Class"), "zh": ("经济舱", "商务舱")}

_USERS = (
    ("user1", "Eve", "password123", 2000.0, 50000.0, "regular"),
    ("user2", "Frank", "password456", 8000.0, 8000.0, "silver"),
    ("user3", "Grace", "password789", 1000.0, 5000.0, "gold"),
)

# (flight_no, origin, destination, depart, arrive, seats, economy, business); numbers are not unique.
_FLIGHTS = (
    ("CA1234", "Beijing", "Shanghai", "2024-07-15 08:00:00", "2024-07-15 10:30:00", 5, 1200, 3000),
    ("MU5678", "Shanghai", "Beijing", "2024-07-16 09:00:00", "2024-07-16 11:30:00", 3, 1900, 3000),
    ("CZ4321", "Shanghai", "Beijing", "2024-07-16 20:00:00", "2024-07-16 22:00:00", 8, 2500, 4000),
    ("CZ4352", "Shanghai", "Beijing", "2024-07-17 20:00:00", "2024-07-17 22:00:00", 8, 1600, 2500),
    ("MU3561", "Beijing", "Nanjing", "2024-07-18 08:00:00", "2024-07-18 10:00:00", 8, 1500, 4000),
    ("MU1566", "Beijing", "Nanjing", "2024-07-18 20:00:00", "2024-07-18 22:00:00", 8, 1500, 4000),
    ("CZ1765", "Nanjing", "Shenzhen", "2024-07-17 20:30:00", "2024-07-17 22:00:00", 8, 1500, 2500),
    ("CZ1765", "Nanjing", "Shenzhen", "2024-07-18 12:30:00", "2024-07-18 15:00:00", 8, 1500, 2500),
    ("MH1765", "Xiamen", "Chengdu", "2024-07-17 12:30:00", "2024-07-17 15:00:00", 8, 1500, 2500),
    ("MH2616", "Chengdu", "Xiamen", "2024-07-18 18:30:00", "2024-07-18 21:00:00", 8, 1500, 2500),
    ("MH2616", "Chengdu", "Fuzhou", "2024-07-16 18:30:00", "2024-07-16 21:00:00", 8, 1500, 2500),
)

# (reservation_id, user_id, flight_no, business cabin?, origin, destination); all paid by bank, one bag.
# res_4 points at MU2616, a flight that does not exist (acebench-agent §11.7).
_RESERVATIONS = (
    ("res_1", "user1", "CA1234", False, "Beijing", "Shanghai"),
    ("res_2", "user1", "MU5678", True, "Shanghai", "Beijing"),
    ("res_3", "user2", "MH1765", True, "Xiamen", "Chengdu"),
    ("res_4", "user2", "MU2616", True, "Chengdu", "Xiamen"),
)


class _User(TypedDict):
    user_name: str
    password: str
    cash_balance: float
    bank_balance: float
    membership_level: str


class _Flight(TypedDict):
    flight_no: str
    origin: str
    destination: str
    depart_time: str
    arrival_time: str
    status: str
    seats_available: int
    economy_price: int
    business_price: int


class _Booking(TypedDict):
    reservation_id: str
    user_id: object  # the model's values from here on, stored as sent
    flight_no: object
    payment_method: object
    cabin: object
    baggage: object  # upstream adds the model's add_baggage to it with +, whatever both are (plain.py)


class _Reservation(_Booking, total=False):
    origin: str  # only the four initial reservations have a route (acebench-agent §11.7)
    destination: str


_Record = TypeVar("_Record", bound=Mapping[str, object])

_FREE_BAGS = {"regular": (1, 2), "silver": (2, 3), "gold": (3, 3)}  # (economy, business)
_TIME_FORMAT = "%Y-%m-%d %H:%M:%S"
# ACEBench quirk: cancellation uses this fixed clock, not the policy's 2024-07-15 08:00 (§11.8).
_NOW = datetime(2024, 7, 14, 6, 0, 0)


class Travel(Scenario):
    API_METHODS = (
        "get_flight_details",
        "get_user_details",
        "get_reservation_details",
        "authenticate_user",
        "get_baggage_allowance",
        "find_transfer_flights",
        "calculate_baggage_fee",
        "update_balance",
        "reserve_flight",
        "modify_flight",
        "cancel_reservation",
        "process_refund",
        "calculate_price_difference",
    )
    TEXT: ClassVar[Mapping[str, Mapping[str, str]]] = {
        "en": {
            "no_direct": "There are no direct flights that meet the criteria.",
            "bad_login": "Incorrect username or password.",
            "need_id": "Please provide a valid reservation ID or user ID",
            "no_transfer": "No connecting flights that meet the criteria were found.",
            "auth_failed": "Authentication failed. Please check your user ID and password.",
            "bad_payment": "Invalid payment method",
            "cash_short": "Your cash balance is insufficient. Please consider using another payment method.",
            "bank_short": "Your bank balance is insufficient. Please consider using another payment method.",
            "booked": "Booking successful. Reservation ID: {rid}. Total cost: {total} yuan (including baggage fees).",
            "no_reservation": "Reservation not found or user ID does not match.",
            "no_flight": "Flight information not found.",
            "no_user": "User information not found.",
            "flight_changed": "Flight number has been changed.",
            "change_failed": "Flight change failed: Invalid new flight number or destination does not match.",
            "cabin_paid": "Cabin change successful. Price difference paid: {diff}.",
            "cabin_short": "Insufficient balance to pay the cabin price difference.",
            "cabin_refunded": "Cabin change successful. Price difference refunded: {diff}.",
            "bags_paid": "Baggage has been added. Additional fee to be paid: {cost}.",
            "bags_short": "Insufficient balance to pay the additional baggage fees.",
            "no_fees": "Modification completed with no additional fees.",
            "bad_user": "Invalid user ID.",
            "bad_reservation": "Invalid reservation ID or it does not belong to the user.",
            "bad_flight": "Invalid flight information.",
            "used": "The flight segment has been used and cannot be canceled.",
            "airline_reason": "The airline has canceled the flight.",
            "airline_cancel": "The flight has been canceled. Your reservation will be canceled free of charge, and "
                              "{refund} yuan has been refunded.",
            "free_cancel": "More than 24 hours before departure. Free cancellation successful, {refund} yuan has "
                           "been refunded.",
            "fee_cancel": "Less than 24 hours before departure. A cancellation fee of {fee} yuan has been deducted, "
                          "and {refund} yuan has been refunded.",
        },
        "zh": {
            "no_direct": "没有符合条件的直达航班",
            "bad_login": "用户名或密码不正确",
            "need_id": "请提供有效的预订ID或用户ID",
            "no_transfer": "未找到符合条件的中转航班。",
            "auth_failed": "认证失败，请检查用户ID和密码。",
            "bad_payment": "支付方式无效",
            "cash_short": "cash余额不足，请考虑换一种支付方式",
            "bank_short": "bank余额不足，请考虑换一种支付方式",
            "booked": "预订成功，预订号：{rid}，总费用：{total}元（包含行李费用）。",
            "no_reservation": "预订未找到或用户ID不匹配。",
            "no_flight": "航班信息未找到。",
            "no_user": "用户信息未找到。",
            "flight_changed": "航班号已更改。",
            "change_failed": "航班更改失败：新的航班号无效或目的地不匹配。",
            "cabin_paid": "舱位更改成功。已支付差价: {diff}。",
            "cabin_short": "余额不足，无法支付舱位差价。",
            "cabin_refunded": "舱位更改成功。已退款差价: {diff}。",
            "bags_paid": "行李已增加。需支付额外费用: {cost}。",
            "bags_short": "余额不足，无法支付额外行李费用。",
            "no_fees": "修改完成，无需额外费用。",
            "bad_user": "用户ID无效。",
            "bad_reservation": "预订ID无效或与该用户无关。",
            "bad_flight": "航班信息无效。",
            "used": "航段已使用，无法取消。",
            "airline_reason": "航空公司取消航班",
            "airline_cancel": "航班已取消，您的预订将被免费取消，已退款{refund}元。",
            "free_cancel": "距离出发时间超过24小时，免费取消成功，已退款{refund}元。",
            "fee_cancel": "距离出发时间不足24小时，已扣除取消费{fee}元，退款{refund}元。",
        },
    }

    def __init__(self, language: str = "en") -> None:
        super().__init__(language)
        zh = language == "zh"

        def city(name: str) -> str:
            return _CITY_ZH[name] if zh else name

        economy, business = _CABINS[language]
        self._economy, self._business = economy, business
        self.users: dict[object, _User] = {
            uid: {"user_name": name, "password": password, "cash_balance": cash, "bank_balance": bank,
                  "membership_level": level}
            for uid, name, password, cash, bank, level in _USERS
        }
        self.flights: list[_Flight] = [
            {"flight_no": no, "origin": city(src), "destination": city(dst), "depart_time": dep,
             "arrival_time": arr, "status": "available", "seats_available": seats, "economy_price": eco,
             "business_price": biz}
            for no, src, dst, dep, arr, seats, eco, biz in _FLIGHTS
        ]
        self.reservations: list[_Reservation] = [
            {"reservation_id": rid, "user_id": uid, "flight_no": no, "payment_method": "bank",
             "cabin": business if biz else economy, "baggage": 1, "origin": city(src), "destination": city(dst)}
            for rid, uid, no, biz, src, dst in _RESERVATIONS
        ]

    def _load_scenario(self, config: object) -> None:
        """Travel ignores its configuration (acebench-agent §2.1)."""

    # -- lookups ---------------------------------------------------------------------------------------

    def _first(self, records: list[_Record], **match: object) -> _Record | None:
        return next((r for r in records if all(r[k] == v for k, v in match.items())), None)

    def _fare(self, flight: _Flight, cabin: object) -> int:
        # Anything but the economy name is charged at the business fare.
        return flight["economy_price"] if cabin == self._economy else flight["business_price"]

    def _error(self) -> dict[str, object]:
        return {"status": "error", "message": self._text("bad_login")}

    def get_flight_details(self, origin: object = None, destination: object = None) -> object:
        flights = self.flights
        if origin:
            flights = [f for f in flights if f["origin"] == origin]
        if destination:
            flights = [f for f in flights if f["destination"] == destination]
        if len(flights) == 0:
            return self._text("no_direct")
        return [dict(f) for f in flights]

    def get_user_details(self, user_id: object, password: object) -> dict[str, object]:
        user = self.users.get(user_id)
        if user and user["password"] == password:
            return {key: value for key, value in user.items() if key != "password"}
        return self._error()

    def get_reservation_details(self, reservation_id: object = None, user_id: object = None) -> object:
        if reservation_id:
            chosen = [r for r in self.reservations if r["reservation_id"] == reservation_id]
        elif user_id:
            chosen = [r for r in self.reservations if r["user_id"] == user_id]
        else:
            return {"status": "error", "message": self._text("need_id")}
        return [{**r, "flight_info": self._first(self.flights, flight_no=r["flight_no"])} for r in chosen]

    def authenticate_user(self, user_id: object, password: object) -> _User | dict[str, object]:
        user = self.users.get(user_id)
        if user and user["password"] == password:
            return user
        return self._error()

    def get_baggage_allowance(self, membership_level: object, cabin_class: object) -> int:
        table: dict[object, dict[object, int]] = {level: {self._economy: eco, self._business: biz}
                                                  for level, (eco, biz) in _FREE_BAGS.items()}
        return table.get(membership_level, {}).get(cabin_class, 0)

    def find_transfer_flights(self, origin_city: object, transfer_city: object, destination_city: object) -> object:
        first_legs = [f for f in self.flights
                      if f["origin"] == origin_city and f["destination"] == transfer_city
                      and f["status"] == "available"]
        second_legs = [f for f in self.flights
                       if f["origin"] == transfer_city and f["destination"] == destination_city
                       and f["status"] == "available"]
        pairs = []
        for first in first_legs:
            lands = datetime.strptime(first["arrival_time"], _TIME_FORMAT)
            for second in second_legs:
                if lands < datetime.strptime(second["depart_time"], _TIME_FORMAT):
                    pairs.append({"first_leg": first, "second_leg": second})
        return pairs if pairs else self._text("no_transfer")

    def calculate_baggage_fee(self, membership_level: object, cabin_class: object, baggage_count: object) -> object:
        table: dict[object, dict[object, int]] = {level: {self._economy: eco, self._business: biz}
                                                  for level, (eco, biz) in _FREE_BAGS.items()}
        free = table[membership_level][cabin_class]  # KeyError for an unknown level or cabin
        # Every bag over the allowance is charged.
        return operator.mul(larger(operator.sub(baggage_count, free), 0), 50)

    # user and amount: a record and a number from our own calls, anything from the model's (indexed and added to).
    def update_balance(self, user: object, payment_method: object, amount: object) -> bool:
        if payment_method == "cash":
            if less(operator.add(item(user, "cash_balance"), amount), 0):
                return False
            add_to(user, "cash_balance", amount)
        elif payment_method == "bank":
            if less(operator.add(item(user, "bank_balance"), amount), 0):
                return False
            add_to(user, "bank_balance", amount)
        # Any other method changes nothing and still reports success.
        return True

    # -- bookings --------------------------------------------------------------------------------------

    def reserve_flight(self, user_id: object, password: object, flight_no: object, cabin: object,
                       payment_method: object, baggage_count: object) -> object:
        user = self.authenticate_user(user_id, password)
        if not user:  # ACEBench quirk: the error dict is truthy, so this never fires (§3.5)
            return self._text("auth_failed")
        flight = self._first(self.flights, flight_no=flight_no, status="available")
        if flight is None:  # no existence check upstream: its fare lookup subscripts None
            raise TypeError("'NoneType' object is not subscriptable")
        # A failed login surfaces here as KeyError 'membership_level' (acebench-agent §3.5).
        total: object = operator.add(self._fare(flight, cabin),
                                     self.calculate_baggage_fee(user["membership_level"], cabin, baggage_count))
        if payment_method not in ["cash", "bank"]:  # checked only after the cost
            return self._text("bad_payment")
        account = self.users[user_id]  # upstream's .get: the login above found this user
        balance_key: Literal["cash_balance", "bank_balance"] = (
            "cash_balance" if payment_method == "cash" else "bank_balance")
        if greater(total, account[balance_key]):
            return self._text("cash_short" if payment_method == "cash" else "bank_short")
        account[balance_key] = operator.sub(account[balance_key], total)  # total: a number, compared above
        flight["seats_available"] -= 1  # no seat check: it may go negative
        rid = f"res_{len(self.reservations) + 1}"
        # New reservations carry no origin or destination (acebench-agent §11.7).
        self.reservations.append({"reservation_id": rid, "user_id": user_id, "flight_no": flight_no,
                                  "payment_method": payment_method, "cabin": cabin, "baggage": baggage_count})
        return self._text("booked", rid=rid, total=total)

    def modify_flight(self, user_id: object, reservation_id: object, new_flight_no: object = None,
                      new_cabin: object = None, add_baggage: object = 0, new_payment_method: object = None) -> str:
        reservation = self._first(self.reservations, reservation_id=reservation_id, user_id=user_id)
        if not reservation:
            return self._text("no_reservation")
        # The fare basis stays the pre-change flight, even after a flight change (acebench-agent §3.5).
        current = self._first(self.flights, flight_no=reservation["flight_no"])
        if not current:
            return self._text("no_flight")
        method = new_payment_method if new_payment_method else reservation["payment_method"]
        user = self.users[user_id]
        if not user:
            return self._text("no_user")
        notes: list[str] = []
        if new_flight_no and new_flight_no != reservation["flight_no"]:
            target = self._first(self.flights, flight_no=new_flight_no)
            if target and target["origin"] == current["origin"] and target["destination"] == current["destination"]:
                reservation["flight_no"] = new_flight_no
                notes.append(self._text("flight_changed"))
            else:
                return self._text("change_failed")
        if new_cabin and new_cabin != reservation.get("cabin"):
            diff = self._price_difference(current, reservation["cabin"], new_cabin)
            reservation["cabin"] = new_cabin  # changed even when the difference cannot be paid
            if diff > 0:
                paid = self.update_balance(user, method, -diff)
                notes.append(self._text("cabin_paid", diff=diff) if paid else self._text("cabin_short"))
            elif diff < 0:
                self.update_balance(user, method, -diff)
                notes.append(self._text("cabin_refunded", diff=-diff))
        if greater(add_baggage, 0):
            allowance = self.get_baggage_allowance(user["membership_level"], reservation["cabin"])
            bags: object = operator.add(reservation.get("baggage", 0), add_baggage)
            cost: object = operator.mul(larger(0, operator.sub(bags, allowance)), 50)
            if greater(cost, 0):
                paid = self.update_balance(user, method, negative(cost))
                notes.append(self._text("bags_paid", cost=cost) if paid else self._text("bags_short"))
            reservation["baggage"] = bags
        if not notes:
            notes.append(self._text("no_fees"))
        return " ".join(notes)

    def cancel_reservation(self, user_id: object, reservation_id: object, reason: object) -> str:
        user = self.users.get(user_id, None)
        if not user:
            return self._text("bad_user")
        reservation = self._first(self.reservations, reservation_id=reservation_id, user_id=user_id)
        if not reservation:
            return self._text("bad_reservation")
        flight = self._first(self.flights, flight_no=reservation["flight_no"])
        if not flight:
            return self._text("bad_flight")
        departs = datetime.strptime(flight["depart_time"], _TIME_FORMAT)
        if departs < _NOW:
            return self._text("used")
        fare = self._fare(flight, reservation["cabin"])
        # Refunds always go to cash at today's fare; the reservation is kept, so a cancel can repeat (§3.5).
        if reason == self._text("airline_reason"):
            self.process_refund(user, fare)
            return self._text("airline_cancel", refund=fare)
        if departs - _NOW > timedelta(days=1):
            self.process_refund(user, fare)
            return self._text("free_cancel", refund=fare)
        fee = fare * 0.1
        refund = fare - fee
        self.process_refund(user, refund)
        return self._text("fee_cancel", fee=fee, refund=refund)

    def process_refund(self, user: object, amount: object) -> None:  # as update_balance
        add_to(user, "cash_balance", amount)
        # Upstream then logs a line naming user["user_name"]; the lookup still fails on a nameless dict.
        item(user, "user_name")

    def calculate_price_difference(self, flight: object, old_cabin: object, new_cabin: object) -> object:
        prices: dict[object, object] = {self._economy: item(flight, "economy_price"),
                                        self._business: item(flight, "business_price")}
        return operator.sub(prices.get(new_cabin, 0), prices.get(old_cabin, 0))

    def _price_difference(self, flight: _Flight, old_cabin: object, new_cabin: object) -> int:
        """calculate_price_difference on one of our own flights (modify_flight's call): its prices are ints."""
        prices: dict[object, int] = {self._economy: flight["economy_price"], self._business: flight["business_price"]}
        return prices.get(new_cabin, 0) - prices.get(old_cabin, 0)
