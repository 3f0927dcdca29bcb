"""`TradingBot`: a brokerage account, its orders, a watch list and stock quotes (docs/bfcl-multi-turn.md#tradingbot)."""

from __future__ import annotations

import random
from collections.abc import Mapping
from datetime import datetime, timedelta

from .....json_value import JSONValue
from ..tables import Tables

Order = dict[str, object]  # id, order_type, symbol, price, amount, status
Stock = dict[str, object]  # price, percent_change, volume, MA(5), MA(20)
Outcome = dict[str, object]  # a result: statuses, errors, the stored dicts themselves

_SEED = 1053520  # upstream's seed when the scenario names none (no sample does)
_NOW = datetime(2024, 9, 1, 10, 30)  # the simulated clock, fixed
_DAY_SECONDS = 86400
_STATE = ("orders", "account_info", "authenticated", "market_status", "order_counter", "stocks", "watch_list",
          "transaction_history")
_EXTENSIONS = ("WATCH_LIST_EXTENSION", "TRANSACTION_HISTORY_EXTENSION", "MA_5_EXTENSION", "MA_20_EXTENSION",
               "TECHNOLOGY_EXTENSION", "AUTOMOBILE_EXTENSION", "ORDER_DETAIL_EXTENSION")


class TradingBot:
    """Orders by id, an account with a balance, quotes by symbol, a watch list and a login flag.

    Attributes:
        orders: {order id: order}; loaded keys made of digits become ints, as upstream.
        account_info: account_id, balance, binding_card.
        authenticated: whether the user is logged in (no credentials are checked).
        market_status: "Open" or "Closed"; withdrawals need "Open".
        order_counter: the id the next order gets.
        stocks: {symbol: quote}.
        watch_list: the watched symbols.
        transaction_history: deposits and withdrawals, each with a drawn timestamp.
        long_context: whether the long-context extras are added to some results.
    """

    orders: dict[object, Order]
    account_info: dict[str, object]
    authenticated: bool
    market_status: str
    order_counter: int
    stocks: dict[str, Stock]
    watch_list: list[str]
    transaction_history: list[dict[str, object]]
    long_context: bool

    def __init__(self, tables: Tables) -> None:
        self._tables = tables
        self._random = random.Random(_SEED)
        self._extensions: dict[str, object] = {}

    def load_scenario(self, scenario: Mapping[str, JSONValue], long_context: bool = False) -> None:
        defaults = self._tables.default_state("TradingBot")
        for name in _STATE:
            setattr(self, name, scenario.get(name, defaults[name]))
        self.orders = {int(key) if isinstance(key, str) and key.isdigit() else key: order
                       for key, order in self.orders.items()}
        self.long_context = long_context
        seed = scenario.get("random_seed", _SEED)
        if isinstance(seed, (list, dict)):  # no sample names a seed; upstream's Random refuses these too
            raise TypeError(f"TradingBot: {seed!r} is not a random seed")
        self._random = random.Random(seed)
        if long_context:
            self._extensions = {name: self._tables.value(f"long_context.{name}") for name in _EXTENSIONS}

    def get_current_time(self) -> dict[str, str]:
        return {"current_time": "10:30 AM"}  # the fixed clock as "%I:%M %p" in the C locale

    def get_symbol_by_name(self, name: str) -> dict[str, object]:
        symbols = self._tables.value("trading_bot.TradingBot.get_symbol_by_name.symbol_map")
        assert isinstance(symbols, dict)
        return {"symbol": symbols.get(name, "Stock not found")}

    def get_stock_info(self, symbol: str) -> Outcome:
        if symbol not in self.stocks:
            return {"error": f"Stock with symbol '{symbol}' not found."}
        if not self.long_context:
            return self.stocks[symbol]  # the stored dict itself
        quote = _copy(self.stocks[symbol], assigning=True)
        quote["MA(5)"] = self._extensions["MA_5_EXTENSION"]
        quote["MA(20)"] = self._extensions["MA_20_EXTENSION"]
        return quote

    def get_order_details(self, order_id: int) -> Outcome:
        if order_id not in self.orders:
            return {"error": f"Order with ID {order_id} not found." + "Here is the list of orders_id: "
                             + str(list(self.orders))}
        if not self.long_context:
            return self.orders[order_id]
        order = _copy(self.orders[order_id], assigning=False)
        symbol = order["symbol"]
        texts = self._extensions["ORDER_DETAIL_EXTENSION"]
        assert isinstance(texts, dict)
        metadata = {}
        for key, text in texts.items():
            try:
                metadata[key] = text.format(symbol=symbol)  # the table's own templates, filled with the symbol
            except KeyError as exc:
                return {"error": f"KeyError during formatting: {exc}"}
        order["metadata"] = metadata
        return order

    def cancel_order(self, order_id: int) -> Outcome:
        if order_id not in self.orders:
            return {"error": f"Order with ID {order_id} not found."}
        if self.orders[order_id]["status"] == "Completed":
            return {"error": f"Can't cancel order {order_id}. Order is already completed."}
        self.orders[order_id]["status"] = "Cancelled"
        return {"order_id": order_id, "status": "Cancelled"}

    def place_order(self, order_type: str, symbol: str, price: float, amount: int) -> Outcome:
        if not self.authenticated:
            return {"error": "User not authenticated. Please log in to place an order."}
        if symbol not in self.stocks:
            return {"error": f"Invalid stock symbol: {symbol}"}
        if price <= 0 or amount <= 0:
            return {"error": "Price and amount must be positive values."}
        if order_type.lower() == "buy":  # checked, never debited
            cost = float(price) * int(amount)
            balance = self.account_info.get("balance", 0)
            if cost > balance:  # type: ignore[operator]  # a loaded balance is a number, as upstream assumes
                return {"error": f"Insufficient funds: required ${cost:.2f} but only ${balance:.2f} available."}
        price = float(price)
        order_id = self.order_counter
        self.orders[order_id] = {"id": order_id, "order_type": order_type, "symbol": symbol, "price": price,
                                 "amount": amount, "status": "Open"}
        self.order_counter += 1
        # stored "Open", reported "Pending", as upstream
        return {"order_id": order_id, "order_type": order_type, "status": "Pending", "price": price, "amount": amount}

    def withdraw_funds(self, amount: float) -> Outcome:
        if not self.authenticated:
            return {"error": "User not authenticated. Please log in to make a transaction."}
        if self.market_status != "Open":
            return {"error": "Market is closed. Transactions are not allowed."}
        if amount <= 0:
            return {"error": "Transaction amount must be positive."}
        if amount > self.account_info["balance"]:  # type: ignore[operator]
            return {"error": "Insufficient funds for withdrawal."}
        return self._move(amount, "withdrawal", "Withdrawal successful")

    def get_account_info(self) -> Outcome:
        if not self.authenticated:
            return {"error": "User not authenticated. Please log in to view account information."}
        return self.account_info  # the live dict, as upstream

    def trading_login(self, username: str, password: str) -> dict[str, str]:
        if self.authenticated:
            return {"status": "Already logged in"}
        self.authenticated = True
        return {"status": "Logged in successfully"}

    def trading_get_login_status(self) -> dict[str, bool]:
        return {"status": bool(self.authenticated)}

    def trading_logout(self) -> dict[str, str]:
        if not self.authenticated:
            return {"status": "No user is currently logged in"}
        self.authenticated = False
        return {"status": "Logged out successfully"}

    def fund_account(self, amount: float) -> Outcome:
        if not self.authenticated:
            return {"error": "User not authenticated. Please log in to fund the account."}
        if amount <= 0:  # no market check here, unlike withdraw_funds
            return {"error": "Funding amount must be positive."}
        return self._move(amount, "deposit", "Account funded successfully")

    def remove_stock_from_watchlist(self, symbol: str) -> Outcome:
        if not self.authenticated:
            return {"error": "User not authenticated. Please log in to modify the watchlist."}
        if symbol not in self.watch_list:
            return {"error": f"Stock {symbol} not found in watchlist."}
        self.watch_list.remove(symbol)
        return {"status": f"Stock {symbol} removed from watchlist successfully."}

    def get_watchlist(self) -> Outcome | list[object]:
        if not self.authenticated:  # a list, not a dict: its result string is a repr
            return ["Error: User not authenticated. Please log in to view the watchlist."]
        if not self.long_context:
            return {"watchlist": self.watch_list}
        extension = self._extensions["WATCH_LIST_EXTENSION"]
        assert isinstance(extension, list)
        return [*self.watch_list, *extension]  # a list too; its last item is `...`, shown as Ellipsis

    def get_order_history(self) -> Outcome | list[object]:
        if not self.authenticated:
            return [{"error": "User not authenticated. Please log in to view order history."}]
        return {"history": list(self.orders)}

    def get_transaction_history(self, start_date: str | None = None, end_date: str | None = None
                                ) -> Outcome | list[object]:
        if not self.authenticated:
            return [{"error": "User not authenticated. Please log in to view transaction history."}]
        # empty bounds count as absent; a bound that does not parse raises strptime's ValueError
        start = datetime.strptime(start_date, "%Y-%m-%d") if start_date else datetime.min
        end = datetime.strptime(end_date, "%Y-%m-%d") if end_date else datetime.max
        kept: list[object] = []
        for entry in self.transaction_history:
            stamp = entry["timestamp"]
            if start <= datetime.strptime(stamp, "%Y-%m-%d %H:%M:%S") <= end:  # type: ignore[arg-type]
                kept.append(entry)
        if self.long_context:
            extension = self._extensions["TRANSACTION_HISTORY_EXTENSION"]
            assert isinstance(extension, list)
            kept.extend(extension)
        return {"transaction_history": kept}

    def get_available_stocks(self, sector: str) -> Outcome:
        sectors = self._tables.value("trading_bot.TradingBot.get_available_stocks.sector_map")
        assert isinstance(sectors, dict)
        if self.long_context:
            sectors["Technology"] = [*sectors["Technology"], *_as_list(self._extensions["TECHNOLOGY_EXTENSION"])]
            sectors["Automobile"] = [*sectors["Automobile"], *_as_list(self._extensions["AUTOMOBILE_EXTENSION"])]
        return {"stock_list": sectors.get(sector, [])}

    def filter_stocks_by_price(self, stocks: list[str], min_price: float, max_price: float) -> Outcome:
        # an unknown symbol's price counts as 0, so it passes when 0 is in range
        kept = [symbol for symbol in stocks
                if self.stocks.get(symbol, {}).get("price", 0) >= min_price  # type: ignore[operator]
                and self.stocks.get(symbol, {}).get("price", 0) <= max_price]  # type: ignore[operator]
        return {"filtered_stocks": kept}

    def add_to_watchlist(self, stock: str) -> Outcome:
        if stock not in self.watch_list and stock in self.stocks:  # no login needed
            self.watch_list.append(stock)
        return {"watchlist": self.watch_list}

    def notify_price_change(self, stocks: list[str], threshold: float) -> Outcome:
        moved = [symbol for symbol in stocks
                 if symbol in self.stocks
                 and abs(self.stocks[symbol]["percent_change"]) >= threshold]  # type: ignore[arg-type]
        if moved:
            return {"notification": f"Stocks {', '.join(moved)} have significant price changes."}
        return {"notification": "No significant price changes in the selected stocks."}

    def _move(self, amount: float, kind: str, status: str) -> Outcome:
        """Debit (a withdrawal) or credit the balance, log it with a drawn timestamp, report the new balance."""
        if kind == "withdrawal":
            self.account_info["balance"] -= amount  # type: ignore[operator]
        else:
            self.account_info["balance"] += amount  # type: ignore[operator]
        self.transaction_history.append({"type": kind, "amount": amount, "timestamp": self._timestamp()})
        return {"status": status, "new_balance": self.account_info["balance"]}

    def _timestamp(self) -> str:
        """A time in the simulated day after the fixed clock, one draw.

        Upstream draws between the day's two local POSIX timestamps and converts back to local time; the offset
        from the start is drawn the same way (`randint` depends only on the width of the range), so the text is
        the same in every time zone without a clock change on 2024-09-01 (docs/bfcl-multi-turn.md#tradingbot)."""
        offset = self._random.randint(0, _DAY_SECONDS)
        return (_NOW + timedelta(seconds=offset)).strftime("%Y-%m-%d %H:%M:%S")


def _copy(record: object, assigning: bool) -> dict[str, object]:
    """`record.copy()` of a stored order or quote, about to be read (or written) by a key; for a value that is not
    a dict (a malformed scenario), the error CPython raises there."""
    if isinstance(record, dict):
        return dict(record)
    if isinstance(record, list):
        raise TypeError("list indices must be integers or slices, not str")
    if isinstance(record, set):
        raise TypeError("'set' object does not support item assignment" if assigning else
                        "'set' object is not subscriptable")
    raise AttributeError(f"'{type(record).__name__}' object has no attribute 'copy'")


def _as_list(value: object) -> list[object]:
    assert isinstance(value, list)
    return value
