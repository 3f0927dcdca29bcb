"""`VehicleControlAPI`: a car's engine, doors, climate, lights, brakes, cruise control and a little trip
arithmetic (docs/bfcl-multi-turn.md#vehiclecontrolapi)."""

from __future__ import annotations

import random
from collections.abc import Mapping

from .....errors import DataError
from .....json_value import JSONValue
from ..tables import Tables

Outcome = dict[str, object]  # a result: readings, statuses, errors

_MODULE = "vehicle_control"
_DISTANCES = f"{_MODULE}.VehicleControlAPI.estimate_distance.if:distance"
_ZIPCODES = f"{_MODULE}.VehicleControlAPI.get_zipcode_based_on_city.if:return"
_MAX_BRAKE_FORCE = 1000  # newtons at a fully pressed pedal
_TIRE_SHOP = "456 Oakwood Avenue, Rivermist, 83214"
# (attribute, the scenario's key for it, DEFAULT_STATE's key for it), in upstream's assignment order: the compared
# state keeps that order; the three force and angle readings are private (not compared)
_LOADED = (("fuelLevel", "fuelLevel", "fuelLevel"), ("batteryVoltage", "batteryVoltage", "batteryVoltage"),
           ("engine_state", "engineState", "engine_state"),
           ("remainingUnlockedDoors", "remainingUnlockedDoors", "remainingUnlockedDoors"),
           ("doorStatus", "doorStatus", "doorStatus"), ("acTemperature", "acTemperature", "acTemperature"),
           ("fanSpeed", "fanSpeed", "fanSpeed"), ("acMode", "acMode", "acMode"),
           ("humidityLevel", "humidityLevel", "humidityLevel"),
           ("headLightStatus", "headLightStatus", "headLightStatus"),
           ("parkingBrakeStatus", "parkingBrakeStatus", "parkingBrakeStatus"),
           ("_parkingBrakeForce", "parkingBrakeForce", "_parkingBrakeForce"),
           ("_slopeAngle", "slopeAngle", "_slopeAngle"), ("brakePedalStatus", "brakePedalStatus", "brakePedalStatus"),
           ("_brakePedalForce", "brakePedalForce", "brakePedalForce"),
           ("distanceToNextVehicle", "distanceToNextVehicle", "distanceToNextVehicle"),
           ("cruiseStatus", "cruiseStatus", "cruiseStatus"), ("destination", "destination", "destination"),
           *((name, name, name) for name in ("frontLeftTirePressure", "frontRightTirePressure",
                                              "rearLeftTirePressure", "rearRightTirePressure")))


class VehicleControlAPI:
    """One car's readings; the two sensor methods draw from a `random.Random` seeded by the scenario.

    Attributes:
        fuelLevel: gallons in the tank.
        batteryVoltage: volts.
        engine_state: "running" or "stopped" (the scenario's key is `engineState`).
        remainingUnlockedDoors: 4 less the number of doors locked (recounted at load, kept by `lockDoors`).
        doorStatus: {door: "locked" or "unlocked"}.
        acTemperature, fanSpeed, acMode, humidityLevel: the climate control (degrees Celsius, 0-100, mode, percent).
        headLightStatus, parkingBrakeStatus, brakePedalStatus, cruiseStatus: the switches.
        distanceToNextVehicle: the cruise control's gap, meters.
        destination: the navigation's destination.
        frontLeftTirePressure, frontRightTirePressure, rearLeftTirePressure, rearRightTirePressure: psi.
        long_context: whether the sample is a long-context one (compared, as upstream's).
    """

    fuelLevel: float
    batteryVoltage: float
    engine_state: str
    remainingUnlockedDoors: int
    doorStatus: dict[str, str]
    acTemperature: float
    fanSpeed: int
    acMode: str
    humidityLevel: float
    headLightStatus: str
    parkingBrakeStatus: str
    _parkingBrakeForce: float
    _slopeAngle: float
    brakePedalStatus: str
    _brakePedalForce: float
    distanceToNextVehicle: float
    cruiseStatus: str
    destination: str
    frontLeftTirePressure: float
    frontRightTirePressure: float
    rearLeftTirePressure: float
    rearRightTirePressure: float
    long_context: bool

    def __init__(self, tables: Tables) -> None:
        self._tables = tables
        self._random = random.Random()

    def load_scenario(self, scenario: Mapping[str, JSONValue], long_context: bool = False) -> None:
        defaults = self._tables.default_state("VehicleControlAPI")
        seed = scenario.get("random_seed", defaults["random_seed"])
        if not isinstance(seed, (int, float, str)):  # no sample names a seed; upstream's Random refuses these too
            raise TypeError(f"VehicleControlAPI: {seed!r} is not a random seed")
        self._random = random.Random(seed)
        for name, key, default in _LOADED:
            setattr(self, name, scenario.get(key, defaults[default]))
        # the loaded count is replaced by a recount of the locked doors
        self.remainingUnlockedDoors = 4 - len([1 for door in self.doorStatus if self.doorStatus[door] == "locked"])
        self.long_context = long_context
        self._max_fuel = self._number("MAX_FUEL_LEVEL")
        self._min_fuel = self._number("MIN_FUEL_LEVEL")
        self._miles_per_gallon = self._number("MILE_PER_GALLON")

    def _number(self, name: str) -> float:
        value = self._tables.value(f"{_MODULE}.{name}")
        if not isinstance(value, (int, float)):
            raise DataError(f"bfcl tables: {_MODULE}.{name} is not a number")
        return value

    def _extension(self, name: str) -> object:
        return self._tables.value(f"long_context.{name}")

    # ------------------------------------------------------------------------------------- engine and fuel

    def startEngine(self, ignitionMode: str) -> Outcome:
        if ignitionMode == "STOP":  # stops the engine even when a check below then fails
            self.engine_state = "stopped"
        if self.remainingUnlockedDoors > 0:
            unlocked = [door for door, status in self.doorStatus.items() if status == "unlocked"]
            return {"error": "All doors must be locked before starting the engine. Here are the unlocked doors: "
                             + ", ".join(unlocked)}
        if self.brakePedalStatus != "pressed":
            return {"error": "Brake pedal needs to be pressed when starting the engine."}
        if self._brakePedalForce != 1000.0:
            return {"error": "Must press the brake fully before starting the engine."}
        if self.fuelLevel < self._min_fuel:
            return {"error": "Fuel tank is empty."}
        if ignitionMode != "START":
            return {"error": "Invalid ignition mode."}
        self.engine_state = "running"
        return {"engineState": self.engine_state, "fuelLevel": self.fuelLevel, "batteryVoltage": self.batteryVoltage}

    def fillFuelTank(self, fuelAmount: float) -> Outcome:
        if fuelAmount < 0:
            return {"error": "Fuel amount cannot be negative."}
        if self.fuelLevel + fuelAmount > self._max_fuel:
            return {"error": "Cannot fill gas above the tank capacity."}
        if self.fuelLevel + fuelAmount < self._min_fuel:
            return {"error": "Fuel tank is empty. Min fuel level is 0 gallons."}
        self.fuelLevel += fuelAmount
        return {"fuelLevel": self.fuelLevel}

    def estimate_drive_feasibility_by_mileage(self, distance: float) -> Outcome:
        return {"canDrive": not self.fuelLevel * self._miles_per_gallon < distance}

    def liter_to_gallon(self, liter: float) -> Outcome:
        return {"gallon": liter * 0.264172}

    def gallon_to_liter(self, gallon: float) -> Outcome:
        return {"liter": gallon * 3.78541}

    # ------------------------------------------------------------------------------------- doors, climate, lights

    def lockDoors(self, unlock: bool, door: list[str]) -> Outcome:
        # one door at a time: an unknown door raises KeyError after the doors before it have changed
        wanted = "unlocked" if unlock else "locked"
        for name in door:
            if self.doorStatus[name] == wanted:
                continue
            self.doorStatus[name] = wanted
            self.remainingUnlockedDoors += 1 if unlock else -1
        return {"lockStatus": wanted, "remainingUnlockedDoors": self.remainingUnlockedDoors}

    def adjustClimateControl(self, temperature: float, unit: str = "celsius", fanSpeed: int = 50,
                             mode: str = "auto") -> Outcome:
        if not (0 <= fanSpeed <= 100):
            return {"error": "Fan speed must be between 0 and 100."}
        self.acTemperature = temperature
        if unit == "fahrenheit":  # stored in Celsius; the result repeats the temperature as given
            self.acTemperature = (temperature - 32) * 5 / 9
        self.fanSpeed = fanSpeed
        self.acMode = mode
        return {"currentACTemperature": temperature, "climateMode": mode, "humidityLevel": self.humidityLevel}

    def get_outside_temperature_from_google(self) -> Outcome:
        temperature = self._random.uniform(-10.0, 40.0)
        if self.long_context:  # the long weather report, with the reading put in (a copy: fresh-process semantics)
            report = self._extension("LONG_WEATHER_EXTENSION")
            if not isinstance(report, dict):
                raise DataError("bfcl tables: long_context.LONG_WEATHER_EXTENSION is not a dict")
            report["outsideTemperature"] = temperature
            return report
        return {"outsideTemperature": temperature}

    def get_outside_temperature_from_weather_com(self) -> Outcome:
        return {"error": 404}

    def setHeadlights(self, mode: str) -> Outcome:
        if mode not in ["on", "off", "auto"]:
            return {"error": "Invalid headlight mode."}
        self.headLightStatus = "on" if mode == "on" else "off"  # "auto" is off
        return {"headlightStatus": self.headLightStatus}

    def displayCarStatus(self, option: str) -> Outcome:
        status: Outcome = {}
        if self.long_context:
            status["metadata"] = self._extension("CAR_STATUS_METADATA_EXTENSION")
        if option == "fuel":
            status["fuelLevel"] = self.fuelLevel
        elif option == "battery":
            status["batteryVoltage"] = self.batteryVoltage
        elif option == "doors":
            status["doorStatus"] = self.doorStatus
        elif option == "climate":
            status.update(currentACTemperature=self.acTemperature, fanSpeed=self.fanSpeed, climateMode=self.acMode,
                          humidityLevel=self.humidityLevel)
        elif option == "headlights":
            status["headlightStatus"] = self.headLightStatus
        elif option == "parkingBrake":
            status.update(parkingBrakeStatus=self.parkingBrakeStatus, parkingBrakeForce=self._parkingBrakeForce,
                          slopeAngle=self._slopeAngle)
        elif option == "brakePedal":
            status.update(brakePedalStatus=self.brakePedalStatus, brakePedalForce=self._brakePedalForce)
        elif option == "engine":
            status["engineState"] = self.engine_state
        else:
            status["error"] = "Invalid option"
        return status

    # ------------------------------------------------------------------------------------- brakes and cruise control

    def activateParkingBrake(self, mode: str) -> Outcome:
        if mode not in ["engage", "release"]:
            return {"error": "Invalid mode"}
        engaged = mode == "engage"
        self.parkingBrakeStatus = "engaged" if engaged else "released"
        self._parkingBrakeForce = 500.0 if engaged else 0.0
        self._slopeAngle = 10.0  # either way
        status: Outcome = {}
        if self.long_context:
            status["parkingBrakeInstruction"] = self._extension("PARKING_BRAKE_INSTRUCTION")
        status.update(parkingBrakeStatus=self.parkingBrakeStatus, _parkingBrakeForce=self._parkingBrakeForce,
                      _slopeAngle=10.0)
        return status

    def pressBrakePedal(self, pedalPosition: float) -> Outcome:
        if not (0 <= pedalPosition <= 1):
            return {"error": "Pedal position must be between 0 and 1."}
        if pedalPosition == 0:
            return self.releaseBrakePedal()
        force = pedalPosition * _MAX_BRAKE_FORCE
        self.brakePedalStatus = "pressed"
        self._brakePedalForce = force
        return {"brakePedalStatus": "pressed", "brakePedalForce": float(force)}

    def releaseBrakePedal(self) -> Outcome:
        self.brakePedalStatus = "released"
        self._brakePedalForce = 0.0
        return {"brakePedalStatus": "released", "brakePedalForce": 0.0}

    def setCruiseControl(self, speed: float, activate: bool, distanceToNextVehicle: float) -> Outcome:
        distanceToNextVehicle = float(distanceToNextVehicle)  # the distance first: its error text wins
        speed = float(speed)
        if self.engine_state == "stopped":
            return {"error": "Start the engine before activating the cruise control."}
        # the gap is stored before the speed is checked: an invalid speed still changes it
        self.distanceToNextVehicle = distanceToNextVehicle
        if activate:
            if speed < 0 or speed > 120 or speed % 5 != 0:
                return {"error": "Invalid speed"}
            self.cruiseStatus = "active"
        else:
            self.cruiseStatus = "inactive"
        return {"cruiseStatus": self.cruiseStatus, "currentSpeed": speed,
                "distanceToNextVehicle": distanceToNextVehicle}

    def get_current_speed(self) -> Outcome:
        return {"currentSpeed": self._random.uniform(0.0, 120.0)}

    # ------------------------------------------------------------------------------------- trips and tyres

    def display_log(self, messages: list[str]) -> Outcome:
        return {"log": messages}

    def estimate_distance(self, cityA: str, cityB: str) -> Outcome:
        distance = _first_branch(self._tables.value(_DISTANCES), {"cityA": cityA, "cityB": cityB}, _DISTANCES)
        if self.long_context:
            distance["intermediaryCities"] = self._extension("INTERMEDIARY_CITIES")
        return distance

    def get_zipcode_based_on_city(self, city: str) -> Outcome:
        return _first_branch(self._tables.value(_ZIPCODES), {"city": city}, _ZIPCODES)

    def set_navigation(self, destination: str) -> Outcome:
        self.destination = destination  # stored before the text is built: a non-string is kept, then fails
        return {"status": "Navigating to " + destination}

    def check_tire_pressure(self) -> Outcome:
        pressures = {"frontLeftTirePressure": self.frontLeftTirePressure,
                     "frontRightTirePressure": self.frontRightTirePressure,
                     "rearLeftTirePressure": self.rearLeftTirePressure,
                     "rearRightTirePressure": self.rearRightTirePressure}
        healthy = 30 <= (self.frontLeftTirePressure + self.frontRightTirePressure + self.rearLeftTirePressure
                         + self.rearRightTirePressure) / 4 <= 35
        car_info = self._extension("CAR_STATUS_METADATA_EXTENSION") if self.long_context else {}
        return {**pressures, "healthy_tire_pressure": healthy, "car_info": car_info}

    def find_nearest_tire_shop(self) -> Outcome:
        return {"shopLocation": _TIRE_SHOP}


def _first_branch(table: object, given: dict[str, object], selector: str) -> Outcome:
    """The value of the first branch of a lifted if/elif chain whose condition holds for the `given` arguments
    (a condition: any of its alternatives, each every `parameter == literal` in turn); the else branch's last."""
    if not isinstance(table, list):
        raise DataError(f"bfcl tables: {selector} is not a list of branches")
    for alternatives, value in table:
        if not isinstance(value, dict):
            raise DataError(f"bfcl tables: {selector} has a value that is not a dict")
        if alternatives is None or any(all(given[name] == literal for name, literal in option.items())
                                       for option in alternatives):
            return value
    raise DataError(f"bfcl tables: {selector} has no else branch")
