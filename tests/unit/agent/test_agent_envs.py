"""The simulated environments and dispatch: construction, broadcast, errors and upstream quirks
(acebench-agent §2-§3, §11)."""

from __future__ import annotations

from typing import Any, TypeVar

import pytest

from json_narrow import as_object
from pytest_tooleval.suites.acebench.agent import (
    Environment,
    build_environment,
    execute_step,
    execute_turn,
)
from pytest_tooleval.suites.acebench.agent.envs.base import BaseApi, Scenario
from pytest_tooleval.suites.acebench.agent.envs.food import FoodPlatform
from pytest_tooleval.suites.acebench.agent.envs.message import MessageApi
from pytest_tooleval.suites.acebench.agent.envs.travel import Travel

S = TypeVar("S", bound=Scenario)

PHONE = ["BaseApi", "MessageApi", "ReminderApi", "FoodPlatform"]
ONLINE = {"BaseApi": {"wifi": True, "logged_in": True}}


def step(env: Any, *messages: str) -> Any:
    """The observation list of the last message."""
    for message in messages:
        outcome = execute_step(env, message)
    return outcome.message


def instance(env: Environment, cls: type[S]) -> S:
    """The environment's instance of `cls`, which it must hold."""
    found = env.instances[cls.__name__]
    assert isinstance(found, cls)
    return found


def flags(env: Any) -> dict[str, tuple[Any, Any]]:
    return {name: (inst.wifi, inst.logged_in) for name, inst in env.instances.items() if hasattr(inst, "wifi")}


# -- construction ----------------------------------------------------------------------------------------------


def test_base_config_wins_and_applies_to_every_phone_class() -> None:
    config = {
        "BaseApi": {"wifi": True, "logged_in": False},
        "MessageApi": {"wifi": False},
        "FoodPlatform": {"logged_in_users": ["Eve"]},
    }
    env = build_environment("en", config, PHONE)
    assert set(flags(env).values()) == {(True, False)}
    # The FoodPlatform entry is overwritten by the second (BaseApi) load.
    assert instance(env, FoodPlatform).logged_in_users == []


def test_logged_in_users_come_from_the_base_entry() -> None:
    env = build_environment("en", {"BaseApi": {"logged_in_users": ["Jack"]}}, ["BaseApi", "FoodPlatform"])
    assert instance(env, FoodPlatform).logged_in_users == ["Jack"]


def test_misspelt_config_key_falls_back_to_defaults() -> None:
    env = build_environment("zh", {"Baspi": {"wifi": True, "logged_in": False}}, PHONE)
    assert set(flags(env).values()) == {(False, True)}


def test_instances_are_fresh_per_build() -> None:
    first = build_environment("en", ONLINE, PHONE)
    step(first, "[delete_message(message_id=1)]")
    second = build_environment("en", ONLINE, PHONE)
    assert 1 in instance(second, MessageApi).inbox


def test_unknown_class_is_an_error() -> None:
    with pytest.raises(ValueError, match="Finance"):
        build_environment("en", {}, ["Finance"])


def test_snapshot_round_trips_through_json() -> None:
    env = build_environment("en", ONLINE, ["BaseApi", "MessageApi"])
    step(env, "[delete_message(message_id=4)]", "[send_message(sender_name='Eve', receiver_name='Jack', message='hi')]")
    base, message = env.snapshot()
    assert base == {"BaseApi": {"wifi": True, "logged_in": True}}
    inbox = as_object(message["MessageApi"])["inbox"]
    assert inbox["7"] == {"sender_id": "USR100", "receiver_id": "USR105", "message": "hi"}
    assert "4" not in inbox


# -- dispatch --------------------------------------------------------------------------------------------------


def test_shared_method_broadcasts_to_every_phone_class() -> None:
    env = build_environment("zh", {"BaseApi": {"wifi": False, "logged_in": False}}, PHONE)
    assert step(env, "[turn_on_wifi(), login_device()]") == [
        {"status": True, "message": "wifi已经打开"},
        {"status": True, "message": "设备已经登录"},
    ]
    assert set(flags(env).values()) == {(True, True)}


def test_unknown_call_repeats_the_previous_result_of_the_message() -> None:
    env = build_environment("en", {}, ["BaseApi", "MessageApi"])
    assert step(env, "[turn_on_wifi(), no_such_call(), get_latest_message_id()]") == [
        {"status": True, "message": "Wi-Fi has been turned on"},
        {"status": True, "message": "Wi-Fi has been turned on"},
        {"status": True, "message": "The latest message ID is 4", "message_id": 4},
    ]


def test_python_errors_become_observations_in_multi_step() -> None:
    env = build_environment("en", ONLINE, ["BaseApi", "MessageApi"])
    assert step(env, "[delete_message(4)]") == [
        "Error during execution: MessageApi.delete_message() missing 1 required positional argument: 'message_id'"
    ]
    assert step(env, "[turn_on_wifi(x=1)]") == [
        "Error during execution: BaseApi.turn_on_wifi() got an unexpected keyword argument 'x'"
    ]
    assert step(env, "[MessageApi.turn_on_wifi()]") == ["Error during execution: name 'MessageApi' is not defined"]
    assert step(env, "[delete_message(message_id=[4])]") == ["Error during execution: unhashable type: 'list'"]


def test_multi_turn_error_stops_the_message_and_is_not_registered() -> None:
    env = build_environment("en", {}, ["BaseApi", "MessageApi"])
    outcome = execute_turn(env, "[turn_on_wifi(), delete_message(), login_device()]")
    assert outcome.message == list("Error during execution: {str(e)}")
    assert not outcome.registered
    assert instance(env, BaseApi).wifi is True  # the calls before the failure did run


def test_observations_are_serialised_like_upstream() -> None:
    env = build_environment("en", ONLINE, ["BaseApi", "MessageApi", "FoodPlatform"])
    assert step(env, "[get_all_message_times_with_ids()]") == [
        {
            "1": "2024-06-09",
            "2": "2024-03-09",
            "3": "2023-12-05",
            "4": "2024-09-09",
            "5": "2024-06-06",
            "6": "2024-01-15",
        }
    ]
    assert step(env, "[check_balance(user_name='Eve'), check_balance(user_name='Nobody')]") == [500.0, 0.0]
    assert step(env, "[get_products(merchant_name='Heytea')]") == [
        "[{'product': 'Cheese Milk Tea', 'price': 25.0}, {'product': 'Four Seasons Spring Milk Tea', 'price': 22.0}]"
    ]
    travel = build_environment("en", {}, ["Travel"])
    assert step(travel, "[update_balance(user='x', payment_method='card', amount=1)]") == ["True"]
    assert step(travel, "[process_refund(user=[0], amount=1)]") == [
        "Error during execution: list indices must be integers or slices, not str"
    ]


# -- messages and food -----------------------------------------------------------------------------------------


def test_message_ids_are_exact_and_sent_messages_have_no_time() -> None:
    env = build_environment("en", ONLINE, ["BaseApi", "MessageApi"])
    assert step(env, "[delete_message(message_id='4')]") == [{"status": False, "message": "Message ID does not exist"}]
    assert step(env, "[send_message(sender_name='Eve', receiver_name='Frank', message='x')]") == [
        {"status": False, "message": "Inbox capacity is full. You need to ask the user which message to delete."}
    ]
    step(env, "[delete_message(message_id=4)]", "[send_message(sender_name='Eve', receiver_name='Frank', message='x')]")
    assert step(env, "[get_latest_message_id()]") == ["Error during execution: 'time'"]
    assert step(env, "[get_earliest_message_id()]") == ["Error during execution: 'time'"]


def test_login_checks_come_before_wifi_checks() -> None:
    env = build_environment("en", {"BaseApi": {"wifi": False, "logged_in": False}}, ["BaseApi", "MessageApi"])
    assert step(env, "[send_message(sender_name='Eve', receiver_name='Frank', message='x')]") == [
        {"status": False, "message": "Device not logged in, unable to send message"}
    ]
    assert step(env, "[search_messages(user_name='Isaac', keyword='CALL')]")[0]["messages"][0]["id"] == 5


def test_food_balance_rule_differs_between_languages() -> None:
    # An order costing exactly the balance: en accepts it (total > balance fails), zh refuses (>=).
    for language, allowed in (("en", True), ("zh", False)):
        env = build_environment(language, ONLINE, ["BaseApi", "FoodPlatform"])
        food = instance(env, FoodPlatform)
        food.users["Jack"]["balance"] = 78.0
        merchant = "Jiutian BBQ" if language == "en" else "九田家烤肉"
        product = "Grilled Pork Belly" if language == "en" else "烤五花肉"
        step(env, "[login_food_platform(username='Jack', password='password654')]")
        result = step(
            env,
            f"[add_food_delivery_order(username='Jack', merchant_name='{merchant}', "
            f"items=[{{'product': '{product}', 'quantity': 1}}])]",
        )
        assert result[0]["status"] is allowed


def test_food_orders_need_the_platform_login_only() -> None:
    env = build_environment("en", {"BaseApi": {"wifi": False, "logged_in": False}}, ["BaseApi", "FoodPlatform"])
    assert step(env, "[login_food_platform(username='Eve', password='password123')]") == [
        {"status": False, "message": "Wi-Fi is not enabled, unable to login"}
    ]
    step(env, "[turn_on_wifi()]", "[login_food_platform(username='Eve', password='password123')]")
    assert step(
        env,
        "[add_food_delivery_order(username='Eve', merchant_name=\"Domino's\", "
        "items=[{'product': 'Margherita Pizza', 'quantity': True}])]",
    ) == [{"status": True, "message": "Food delivery order successfully placed with Domino's. Total amount: 68.0 yuan"}]
    assert step(
        env,
        "[add_food_delivery_order(username='Eve', merchant_name=\"Domino's\", "
        "items=[{'product': 'Margherita Pizza', 'quantity': 2.0}])]",
    ) == [{"status": False, "message": "Invalid quantity 2.0 for product Margherita Pizza"}]


def test_zh_search_orders_crashes_on_item_names() -> None:
    env = build_environment("zh", ONLINE, ["BaseApi", "FoodPlatform"])
    step(
        env,
        "[login_food_platform(username='Eve', password='password123')]",
        "[add_food_delivery_order(username='Eve', merchant_name='达美乐', items=[{'product': '玛格丽特披萨'}])]",
    )
    assert step(env, "[search_orders(keyword='达美乐')]")[0]["status"] is True
    assert step(env, "[search_orders(keyword='披萨')]") == [
        "Error during execution: 'dict' object has no attribute 'lower'"
    ]
    en = build_environment("en", ONLINE, ["BaseApi", "FoodPlatform"])
    step(
        en,
        "[login_food_platform(username='Eve', password='password123')]",
        "[add_food_delivery_order(username='Eve', merchant_name=\"Domino's\", "
        "items=[{'product': 'Margherita Pizza'}])]",
    )
    assert step(en, "[search_orders(keyword='pizza')]")[0]["status"] is True


def test_reminders_keys_and_zh_only_methods() -> None:
    env = build_environment("zh", ONLINE, ["BaseApi", "ReminderApi"])
    step(env, "[add_reminder(title='t', description='d', time=[2024, 7])]")
    reminders = as_object(env.snapshot()[1]["ReminderApi"])["reminder_list"]
    assert reminders["4"] == {"reminder_id": 4, "title": "t", "description": "d", "time": [2024, 7], "notified": False}
    assert step(env, "[mark_as_notified(reminder_id=1)]") == [{"status": True, "message": "提醒ID 1 已标记为已通知"}]
    assert step(env, "[search_reminders(keyword='team')]") == [
        "Error during execution: 'str' object has no attribute 'strftime'"
    ]


# -- travel ----------------------------------------------------------------------------------------------------


def test_travel_booking_and_quirks() -> None:
    env = build_environment("en", {}, ["Travel"])
    assert step(
        env,
        "[reserve_flight(user_id='user2', password='password456', flight_no='CA1234', "
        "cabin='Economy Class', payment_method='bank', baggage_count=3)]",
    ) == ["Booking successful. Reservation ID: res_5. Total cost: 1250 yuan (including baggage fees)."]
    travel = instance(env, Travel)
    assert travel.reservations[-1] == {
        "reservation_id": "res_5",
        "user_id": "user2",
        "flight_no": "CA1234",
        "payment_method": "bank",
        "cabin": "Economy Class",
        "baggage": 3,
    }
    assert travel.users["user2"]["bank_balance"] == 6750.0
    assert step(
        env,
        "[reserve_flight(user_id='user2', password='wrong', flight_no='CA1234', "
        "cabin='Economy Class', payment_method='bank', baggage_count=1)]",
    ) == ["Error during execution: 'membership_level'"]
    assert step(
        env,
        "[reserve_flight(user_id='user2', password='password456', flight_no='XX0000', "
        "cabin='Economy Class', payment_method='bank', baggage_count=1)]",
    ) == ["Error during execution: 'NoneType' object is not subscriptable"]
    assert step(env, "[modify_flight(user_id='user2', reservation_id='res_4', new_cabin='Economy Class')]") == [
        "Flight information not found."
    ]
    # A cabin change is priced on the old flight, before the flight change.
    assert step(
        env,
        "[modify_flight(user_id='user1', reservation_id='res_2', new_flight_no='CZ4352', new_cabin='Economy Class')]",
    ) == ["Flight number has been changed. Cabin change successful. Price difference refunded: 1100."]
    # Cancelling never removes the reservation, so it refunds again.
    for _ in range(2):
        assert step(env, "[cancel_reservation(user_id='user1', reservation_id='res_1', reason='changed plans')]") == [
            "More than 24 hours before departure. Free cancellation successful, 1200 yuan has been refunded."
        ]
    assert travel.users["user1"]["cash_balance"] == 4400.0


def test_travel_zh_texts_and_transfers() -> None:
    env = build_environment("zh", {}, ["Travel"])
    assert step(env, "[get_flight_details(origin='北京', destination='广州')]") == ["没有符合条件的直达航班"]
    found = step(env, "[find_transfer_flights(origin_city='北京', transfer_city='南京', destination_city='深圳')]")
    assert found[0].startswith("[{'first_leg': {'flight_no': 'MU3561'")
    assert step(env, "[get_user_details(user_id='user3', password='x')]") == [
        {"status": "error", "message": "用户名或密码不正确"}
    ]
