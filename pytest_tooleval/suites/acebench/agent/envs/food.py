"""FoodPlatform: six accounts, six merchants and food orders (acebench-agent §3.4)."""

from __future__ import annotations

import copy
import operator
from typing import TypedDict

from ...plain import contains, entries, iterate
from .base import BaseApi, is_false, lowered, lowered_in, with_text


class _Account(TypedDict):
    user_id: str
    password: str
    balance: float


class _Product(TypedDict):
    product: str
    price: float


class _Merchant(TypedDict):
    merchant_id: str
    service_type: str
    menu: list[_Product]


class _OrderLine(TypedDict):
    product: str  # equal to a menu product, so a string
    quantity: int
    price_per_unit: float


class _Order(TypedDict):
    user_name: object  # whatever the model sent, once it was found among the logged-in users
    merchant_name: str
    items: list[_OrderLine]
    total_price: float


_ACCOUNTS = (
    ("Eve", "U100", "password123", 500.0),
    ("Frank", "U101", "password456", 300.0),
    ("Grace", "U102", "password789", 150.0),
    ("Helen", "U103", "password321", 800.0),
    ("Isaac", "U104", "password654", 400.0),
    ("Jack", "U105", "password654", 120.0),
)

# (merchant_id, en name, zh name, service type, ((en product, zh product, price), ...))
_MERCHANTS = (
    ("M100", "Domino's", "达美乐", "Pizza",
     (("Margherita Pizza", "玛格丽特披萨", 68.0), ("Super Supreme Pizza", "超级至尊披萨", 88.0))),
    ("M101", "Rice Village Bibimbap", "米村拌饭", "Bibimbap",
     (("Stone Pot Bibimbap", "石锅拌饭", 35.0), ("Korean Beef Bibimbap", "韩式牛肉拌饭", 45.0))),
    ("M102", "Haidilao", "海底捞", "Hotpot",
     (("Beef Rolls", "牛肉卷", 68.0), ("Seafood Platter", "海鲜拼盘", 88.0))),
    ("M103", "Heytea", "喜茶", "Milk Tea",
     (("Cheese Milk Tea", "芝士奶茶", 25.0), ("Four Seasons Spring Milk Tea", "四季春奶茶", 22.0))),
    ("M104", "Hema Fresh", "盒马生鲜", "Fresh Grocery",
     (("Organic Vegetable Pack", "有机蔬菜包", 15.0), ("Fresh Gift Pack", "生鲜大礼包", 99.0))),
    ("M105", "Jiutian BBQ", "九田家烤肉", "BBQ",
     (("Korean Grilled Beef", "韩式烤牛肉", 128.0), ("Grilled Pork Belly", "烤五花肉", 78.0))),
)


class FoodPlatform(BaseApi):
    API_METHODS = (
        *BaseApi.API_METHODS,
        "login_food_platform",
        "view_logged_in_users",
        "check_balance",
        "add_food_delivery_order",
        "get_products",
        "view_orders",
        "search_orders",
    )
    TEXT = with_text(BaseApi.TEXT, {
        "en": {
            "no_wifi": "Wi-Fi is not enabled, unable to login",
            "unknown_user": "User does not exist",
            "bad_password": "Incorrect password",
            "already": "{username} is already logged in",
            "logged_in": "User {username} has successfully logged in!",
            "nobody": "No users are currently logged in to the food platform",
            "not_logged_in": "User {username} is not logged in to the food platform",
            "unknown_merchant": "Merchant does not exist",
            "bad_quantity": "Invalid quantity {quantity} for product {product}",
            "unknown_product": "Product {product} does not exist in {merchant}'s menu",
            "insufficient": "Insufficient balance to place the order",
            "ordered": "Food delivery order successfully placed with {merchant}. Total amount: {total} yuan",
            "no_menu": "Merchant '{merchant}' does not exist",
            "no_orders": "User has no order records",
            "no_match": "No matching orders found",
        },
        "zh": {
            "no_wifi": "wifi未打开，无法登录",
            "unknown_user": "用户不存在",
            "bad_password": "密码错误",
            "already": "{username} 已经登录",
            "logged_in": "用户{username}登陆成功！",
            "nobody": "当前没有登录food platform",
            "not_logged_in": "用户 {username} 未登录food platform",
            "unknown_merchant": "商家不存在",
            "bad_quantity": "无效的数量 {quantity} 对于商品 {product}",
            "unknown_product": "商品 {product} 不存在于 {merchant} 的菜单中",
            "insufficient": "余额不足，无法下单",
            "ordered": "外卖订单成功下单给 {merchant}，总金额为 {total} 元",
            "no_menu": "商家 '{merchant}' 不存在",
            "no_orders": "用户没有订单记录",
            "no_match": "没有找到匹配的订单",
        },
    })

    def __init__(self, language: str = "en") -> None:
        super().__init__(language)
        zh = language == "zh"
        self.users: dict[object, _Account] = {
            name: {"user_id": uid, "password": password, "balance": balance}
            for name, uid, password, balance in _ACCOUNTS
        }
        self.merchant_list: dict[str, _Merchant] = {
            (zh_name if zh else en_name): {
                "merchant_id": mid,
                "service_type": kind,  # English in both languages
                "menu": [{"product": zh_p if zh else en_p, "price": price} for en_p, zh_p, price in menu],
            }
            for mid, en_name, zh_name, kind, menu in _MERCHANTS
        }
        # Loaded verbatim from the configuration, whatever its type; upstream uses it as a list (`in`, append).
        self.logged_in_users: object = []
        self.orders: list[_Order] = []

    def _load_scenario(self, config: object) -> None:
        super()._load_scenario(config)
        self.logged_in_users = copy.deepcopy(entries(config, "get").get("logged_in_users", []))

    def login_food_platform(self, username: object, password: object) -> dict[str, object]:
        # Only this instance's Wi-Fi flag matters; the device login does not (acebench-agent §11.4).
        if is_false(self.wifi):
            return self._fail("no_wifi")
        if username not in self.users:
            return self._fail("unknown_user")
        if self.users[username]["password"] != password:
            return self._fail("bad_password")
        if contains(self.logged_in_users, username):
            return self._fail("already", username=username)
        if not isinstance(self.logged_in_users, list):  # `.append` on the configured value, whatever it is
            raise AttributeError(f"'{type(self.logged_in_users).__name__}' object has no attribute 'append'")
        self.logged_in_users.append(username)
        return self._ok("logged_in", username=username)

    def view_logged_in_users(self) -> dict[str, object]:
        if not self.logged_in_users:
            return self._fail("nobody")
        return {"status": True, "logged_in_users": self.logged_in_users}

    def check_balance(self, user_name: object) -> object:
        if user_name in self.users:
            return self.users[user_name]["balance"]
        return 0.0  # upstream also prints a notice to stdout; the agent never sees it

    def add_food_delivery_order(self, username: object, merchant_name: object, items: object) -> dict[str, object]:
        if not contains(self.logged_in_users, username):
            return self._fail("not_logged_in", username=username)
        if merchant_name not in self.merchant_list:
            return self._fail("unknown_merchant")
        total = 0.0
        lines: list[_OrderLine] = []
        for item in iterate(items):
            product = entries(item, "get").get("product")
            quantity = entries(item, "get").get("quantity", 1)
            # A bool passes (bool is an int); 2.0 does not.
            if not isinstance(quantity, int) or quantity <= 0:
                return self._fail("bad_quantity", quantity=quantity, product=product)
            for entry in self.merchant_list[merchant_name]["menu"]:
                if entry["product"] == product:
                    total += entry["price"] * quantity
                    lines.append({"product": product, "quantity": quantity, "price_per_unit": entry["price"]})
                    break
            else:
                return self._fail("unknown_product", product=product, merchant=merchant_name)
        balance = self.users[username]["balance"]
        # ACEBench quirk: en refuses total > balance, zh refuses total >= balance (acebench-agent §3.4).
        if (total >= balance) if self._language == "zh" else (total > balance):
            return self._fail("insufficient")
        self.users[username]["balance"] -= total
        self.orders.append({"user_name": username, "merchant_name": merchant_name, "items": lines,
                            "total_price": total})
        return self._ok("ordered", merchant=merchant_name, total=total)

    def get_products(self, merchant_name: object) -> object:
        # `in` then index, as .get does (an unhashable name raises the same TypeError); .get needs a str key.
        merchant = self.merchant_list[merchant_name] if merchant_name in self.merchant_list else None  # noqa: SIM401
        if merchant:
            return merchant["menu"]
        return self._fail("no_menu", merchant=merchant_name)

    def view_orders(self, user_name: object) -> dict[str, object]:
        mine = [order for order in self.orders if order["user_name"] == user_name]
        if not mine:
            return self._fail("no_orders")
        return {"status": True, "orders": mine}

    def search_orders(self, keyword: object) -> dict[str, object]:
        found = [order for order in self.orders
                 if lowered_in(keyword, order["merchant_name"]) or self._items_match(keyword, order)]
        if not found:
            return self._fail("no_match")
        return {"status": True, "orders": found}

    def _items_match(self, keyword: object, order: _Order) -> bool:
        for item in order.get("items", []):
            needle = lowered(keyword)
            if self._language == "zh":
                # ACEBench quirk: the zh class lower-cases the item dict itself and crashes (§3.4).
                raise AttributeError(f"'{type(item).__name__}' object has no attribute 'lower'")
            if operator.contains(item["product"].lower(), needle):  # `needle in ...`: a bytes needle raises
                return True
        return False
