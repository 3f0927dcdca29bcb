"""Local stand-ins for ToolAlpaca's 11 real APIs, reached the way a client behind a proxy reaches the internet.

A test certificate authority, made with the openssl command line, signs one certificate per API host. Each HTTPS
API is a local TLS server presenting its host's certificate; each HTTP API a plain local server. A forward proxy
on 127.0.0.1 tunnels CONNECT requests to the HTTPS stand-ins and forwards absolute-form requests to the HTTP
ones, and answers 502 for any other host, as a proxy that cannot resolve a name does. A client finds all of it
through the standard settings only (`Internet.environ`): https_proxy and http_proxy, no_proxy for the local model
endpoint, and SSL_CERT_FILE naming the test CA.

The answers are recorded ones: per API, a small table from (path, query) to a response in the API's own shape.
APIs that take a key check it as the real ones do, so a request without the right key gets the API's error.
"""

from __future__ import annotations

import contextlib
import json
import select
import shutil
import socket
import socketserver
import ssl
import subprocess
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

__all__ = ["API_HOSTS", "KEYS", "Internet", "Received", "Reply", "make_certificates", "recorded_answer"]


# ---------------------------------------------------------------------------------------------- recorded answers


@dataclass(frozen=True)
class Reply:
    status: int
    content_type: str
    body: bytes

    @property
    def text(self) -> str:
        return self.body.decode("utf-8")


def _json(value: Any, status: int = 200) -> Reply:
    return Reply(status, "application/json; charset=utf-8", json.dumps(value).encode("utf-8"))


def _text(value: str, status: int = 200) -> Reply:
    return Reply(status, "text/plain; charset=utf-8", value.encode("utf-8"))


JPEG = b"\xff\xd8\xff\xe0\x00\x10JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00\xff\xd9"  # a tiny, empty JPEG

# API name -> (scheme, host); the data file's servers[0].url of each real API
API_HOSTS: dict[str, tuple[str, str]] = {
    "Nager.Date": ("https", "date.nager.at"),
    "airportsapi": ("https", "airport-web.appspot.com"),
    "AviationAPI": ("https", "api.aviationapi.com"),
    "chucknorris.io": ("https", "api.chucknorris.io"),
    "Random Useless Facts": ("https", "uselessfacts.jsph.pl"),
    "apilayer weatherstack": ("http", "api.weatherstack.com"),
    "Free Dictionary": ("https", "api.dictionaryapi.dev"),
    "WolframAlpha": ("http", "api.wolframalpha.com"),
    "Fruityvice": ("https", "www.fruityvice.com"),
    "Cataas": ("https", "cataas.com"),
    "CurrencyBeacon": ("https", "api.currencybeacon.com"),
}

# the keys the stand-ins accept: (API name, parameter) -> value; a test puts them in the plugin's variables
KEYS: dict[tuple[str, str], str] = {
    ("apilayer weatherstack", "access_key"): "wstk-5c1f0a9e77d24b3e",
    ("WolframAlpha", "appid"): "WLFM-8Q3ZK2-T7XH4P",
    ("CurrencyBeacon", "api_key"): "cbk-2f6d91ae4c0b7735d8e1",
}

Query = dict[str, list[str]]


def _one(query: Query, name: str) -> str | None:
    values = query.get(name)
    return values[0] if values else None


# Nager.Date -------------------------------------------------------------------------------------------------

_COUNTRIES = {
    "CN": ("China", "People's Republic of China", "Asia", {"MN": "Mongolia", "RU": "Russia", "IN": "India"}),
    "FR": ("France", "French Republic", "Europe", {"BE": "Belgium", "DE": "Germany", "IT": "Italy", "ES": "Spain"}),
    "IT": ("Italy", "Italian Republic", "Europe", {"FR": "France", "CH": "Switzerland", "AT": "Austria"}),
}
_NATIONAL_DAYS = {
    "AU": ("01-26", "Australia Day"),
    "US": ("07-04", "Independence Day"),
    "CA": ("07-01", "Canada Day"),
    "MX": ("09-16", "Independence Day"),
    "GB": ("12-26", "Boxing Day"),
    "DE": ("10-03", "German Unity Day"),
    "JP": ("02-11", "Foundation Day"),
}


def _holidays(year: int, code: str) -> list[dict[str, Any]]:
    day, name = _NATIONAL_DAYS.get(code, ("05-01", "Labour Day"))
    return [
        {
            "date": f"{year}-{when}",
            "localName": label,
            "name": label,
            "countryCode": code,
            "fixed": True,
            "global": True,
            "counties": None,
            "launchYear": None,
            "types": ["Public"],
        }
        for when, label in (("01-01", "New Year's Day"), (day, name))
    ]


def nager(path: str, query: Query) -> Reply:
    parts = path.split("/")[3:]  # /api/v3/<Operation>/...
    match parts:
        case ["IsTodayPublicHoliday", _]:
            return Reply(204, "", b"")  # 204: today is not a public holiday there
        case ["CountryInfo", code] if code in _COUNTRIES:
            common, official, region, borders = _COUNTRIES[code]
            return _json(
                {
                    "commonName": common,
                    "officialName": official,
                    "countryCode": code,
                    "region": region,
                    "borders": [{"commonName": name, "countryCode": border} for border, name in borders.items()],
                }
            )
        case ["AvailableCountries"]:
            return _json(
                [
                    {"countryCode": code, "name": name}
                    for code, name in (
                        ("AU", "Australia"),
                        ("CA", "Canada"),
                        ("CN", "China"),
                        ("DE", "Germany"),
                        ("FR", "France"),
                        ("GB", "United Kingdom"),
                        ("IT", "Italy"),
                        ("JP", "Japan"),
                        ("MX", "Mexico"),
                        ("US", "United States"),
                    )
                ]
            )
        case ["Version"]:
            return _json({"name": "Nager.Date", "version": "2.4.2.0"})
        case ["LongWeekend", year, code] if year.isdigit():
            return _json(
                [
                    {
                        "startDate": f"{year}-05-25",
                        "endDate": f"{year}-05-27",
                        "dayCount": 3,
                        "needBridgeDay": False,
                        "country": code,
                    }
                ]
            )
        case ["PublicHolidays", year, code] if year.isdigit():
            return _json(_holidays(int(year), code))
        case ["NextPublicHolidays", code]:
            return _json(_holidays(2024, code))
        case ["NextPublicHolidaysWorldwide"]:
            return _json(_holidays(2024, "US")[1:] + _holidays(2024, "CA")[1:])
    return _json(
        {"type": "https://tools.ietf.org/html/rfc7231#section-6.5.4", "title": "Not Found", "status": 404}, 404
    )


# airportsapi -------------------------------------------------------------------------------------------------

_AIRPORTS = {
    "EDDF": ("Frankfurt am Main Airport", "http://www.frankfurt-airport.com/"),
    "EDDM": ("Munich Airport", "http://www.munich-airport.de/"),
    "EDDB": ("Berlin Brandenburg Airport", "https://ber.berlin-airport.de/"),
    "EDDH": ("Hamburg Airport", "http://www.hamburg-airport.de/"),
}


def airportsapi(path: str, query: Query) -> Reply:
    prefix = "/_ah/api/airportsapi/v1/airports/"
    code = path[len(prefix) :] if path.startswith(prefix) else ""
    if code in _AIRPORTS:
        name, url = _AIRPORTS[code]
        return _json(
            {
                "ICAO": code,
                "last_update": "2016-05-17T09:51:39.283430",
                "name": name,
                "url": url,
                "kind": "airportsapi#resourcesItem",
                "etag": f'"{code.lower()}-etag"',
            }
        )
    return _json({"error": {"code": 404, "message": "Airport not found"}}, 404)


# AviationAPI ------------------------------------------------------------------------------------------------

_FAA_AIRPORTS = {
    "AVL": ("ASHEVILLE RGNL", "KAVL", "ASHEVILLE", "NC"),
    "ORD": ("CHICAGO O'HARE INTL", "KORD", "CHICAGO", "IL"),
    "KLAX": ("LOS ANGELES INTL", "KLAX", "LOS ANGELES", "CA"),
    "KJFK": ("JOHN F KENNEDY INTL", "KJFK", "NEW YORK", "NY"),
    "KLGA": ("LAGUARDIA", "KLGA", "NEW YORK", "NY"),
}


def aviationapi(path: str, query: Query) -> Reply:
    apt = _one(query, "apt") or ""
    known = _FAA_AIRPORTS.get(apt)
    if path == "/v1/preferred-routes":
        return _json(
            [
                {
                    "origin": "ABE",
                    "route": "ABE FJC ARD CYN",
                    "destination": "ACY",
                    "hours1": "",
                    "type": "TEC",
                    "area": "",
                    "altitude": "5000",
                    "aircraft": "",
                    "direction": "",
                }
            ]
        )
    if known is None:
        return _json({"status": "error", "message": "Airport not found"}, 400)
    name, icao, city, state = known
    if path == "/v1/airports":
        return _json(
            {
                apt: [
                    {
                        "facility_name": name,
                        "faa_ident": apt.removeprefix("K") if len(apt) == 4 else apt,
                        "icao_ident": icao,
                        "city": city,
                        "state": state,
                        "type": "AIRPORT",
                    }
                ]
            }
        )
    if path == "/v1/charts":
        group = _one(query, "group")
        return _json(
            {
                icao: [
                    {
                        "chart_name": "AIRPORT DIAGRAM",
                        "chart_code": "APD",
                        "group": group or "0",
                        "pdf_path": f"https://aeronav.faa.gov/d-tpp/2306/{icao.lower()}_apd.pdf",
                    }
                ]
            }
        )
    if path == "/v1/charts/changes":
        return _json({icao: [{"chart_name": _one(query, "chart_name"), "change": "no change this cycle"}]})
    if path == "/v1/charts/afd":
        return _json(
            {
                icao: [
                    {
                        "pdf_name": "SE_211_15JUN2023.pdf",
                        "pdf_path": "https://aeronav.faa.gov/afd/15jun2023/se_211_15JUN2023.pdf",
                    }
                ]
            }
        )
    return _json({"status": "error", "message": "Not found"}, 404)


# chucknorris.io ---------------------------------------------------------------------------------------------


def _joke(identifier: str, text: str, categories: list[str]) -> dict[str, Any]:
    return {
        "categories": categories,
        "created_at": "2020-01-05 13:42:19.897976",
        "icon_url": "https://api.chucknorris.io/img/avatar/chuck-norris.png",
        "id": identifier,
        "updated_at": "2020-01-05 13:42:19.897976",
        "url": f"https://api.chucknorris.io/jokes/{identifier}",
        "value": text,
    }


def chucknorris(path: str, query: Query) -> Reply:
    if path == "/jokes/random":
        return _json(_joke("r4nd0m", "Chuck Norris counted to infinity. Twice.", []))
    if path == "/jokes/categories":
        return _json(["animal", "movie", "music", "sport"])
    if path.startswith("/jokes/random/"):
        category = path.rsplit("/", 1)[1]
        return _json(
            _joke(f"c-{category}", f"Chuck Norris does not follow {category} trends; they follow him.", [category])
        )
    if path == "/jokes/search":
        word = _one(query, "query") or ""
        return _json({"total": 1, "result": [_joke(f"s-{word}", f"Chuck Norris once made {word} blink first.", [])]})
    return _json({"timestamp": "2023-07-21T12:00:00.000Z", "status": 404, "error": "Not Found", "path": path}, 404)


# Random Useless Facts ---------------------------------------------------------------------------------------


def uselessfacts(path: str, query: Query) -> Reply:
    facts = {
        "/api/v2/facts/random": ("f01", "A group of flamingos is called a flamboyance."),
        "/api/v2/facts/today": ("f02", "Octopuses have three hearts."),
    }
    if path in facts:
        identifier, text = facts[path]
        return _json(
            {
                "id": identifier,
                "text": text,
                "source": "djtech.net",
                "source_url": "http://www.djtech.net/",
                "language": "en",
                "permalink": f"https://uselessfacts.jsph.pl/api/v2/facts/{identifier}",
            }
        )
    return _json({"error": "Not found"}, 404)


# apilayer weatherstack --------------------------------------------------------------------------------------


def weatherstack(path: str, query: Query) -> Reply:
    if _one(query, "access_key") != KEYS["apilayer weatherstack", "access_key"]:
        # the real API answers a bad key with 200 and an error object
        return _json(
            {
                "success": False,
                "error": {
                    "code": 101,
                    "type": "invalid_access_key",
                    "info": "You have not supplied a valid API Access Key.",
                },
            }
        )
    if path != "/current" or not _one(query, "query"):
        return _json({"success": False, "error": {"code": 601, "type": "missing_query"}})
    place, unit = _one(query, "query"), _one(query, "units") or "m"
    temperature = {"m": 21, "s": 294, "f": 70}[unit] if unit in ("m", "s", "f") else 21
    return _json(
        {
            "request": {"type": "City", "query": place, "language": "en", "unit": unit},
            "location": {"name": place, "localtime": "2023-07-21 14:00"},
            "current": {
                "temperature": temperature,
                "weather_descriptions": ["Sunny"],
                "wind_speed": 13,
                "wind_dir": "WNW",
                "humidity": 48,
                "feelslike": temperature,
                "uv_index": 6,
                "visibility": 10,
            },
        }
    )


# Free Dictionary --------------------------------------------------------------------------------------------

_WORDS = {
    "quixotic": ("adjective", "Idealistic to an impractical degree.", "a quixotic plan to end all queues"),
    "serendipity": ("noun", "A happy discovery made by chance.", "We met by pure serendipity."),
    "beautiful": ("adjective", "Pleasing to the senses or the mind.", "a beautiful morning"),
    "ephemeral": ("adjective", "Lasting a very short time.", "Fame on the internet is ephemeral."),
    "affect": ("verb", "To have an influence on.", "The rain affected the match."),
    "effect": ("noun", "A change that results from a cause.", "The medicine had a quick effect."),
}


def dictionary(path: str, query: Query) -> Reply:
    word = path.removeprefix("/api/v2/entries/en/")
    if word in _WORDS:
        part, definition, example = _WORDS[word]
        return _json(
            [
                {
                    "word": word,
                    "phonetic": f"/{word}/",
                    "phonetics": [{"text": f"/{word}/", "audio": f"https://api.dictionaryapi.dev/media/{word}.mp3"}],
                    "meanings": [
                        {"partOfSpeech": part, "definitions": [{"definition": definition, "example": example}]}
                    ],
                }
            ]
        )
    return _json(
        {
            "title": "No Definitions Found",
            "message": "Sorry pal, we couldn't find definitions for the word you were looking for.",
        },
        404,
    )


# WolframAlpha -----------------------------------------------------------------------------------------------

_SHORT_ANSWERS = {
    "current temperature in New York City in Fahrenheit": "77 degrees Fahrenheit",
    "the square root of 625": "25",
    "convert 5 miles to kilometers": "8.04672 kilometers",
    "the population of Tokyo": "about 14 million people",
    "the capital city of Australia": "Canberra, Australian Capital Territory",
    "the square root of 256": "16",
    "how many moons Jupiter has": "95",
    "when Albert Einstein was born": "Friday, March 14, 1879",
    "how many calories are in a medium-sized apple": "about 95 dietary Calories",
    "the diameter of Mars": "about 6779 kilometers",
    "the distance between Mars and Earth": "about 1.5 astronomical units",
    "how many calories are in an apple": "about 95 dietary Calories",
    "how many calories are in a banana": "about 105 dietary Calories",
    "the distance from Los Angeles to New York by car": "about 2790 miles",
    "how long it would take to drive from Los Angeles to New York by car": "about 1 day 17 hours",
}


def wolframalpha(path: str, query: Query) -> Reply:
    if _one(query, "appid") != KEYS["WolframAlpha", "appid"]:
        return _text("Error 1: Invalid appid", 403)
    if path != "/v1/result" or _one(query, "i") not in _SHORT_ANSWERS:
        return _text("No short answer available", 501)  # the real API's answer to a question it cannot answer
    return _text(_SHORT_ANSWERS[_one(query, "i") or ""])


# Fruityvice -------------------------------------------------------------------------------------------------

# name, family, order, genus, (calories, fat, sugar, carbohydrates, protein)
_FRUITS = [
    ("Apple", "Rosaceae", "Rosales", "Malus", (52, 0.4, 10.3, 11.4, 0.3)),
    ("Apricot", "Rosaceae", "Rosales", "Prunus", (15, 0.1, 3.2, 3.9, 0.5)),
    ("Avocado", "Lauraceae", "Laurales", "Persea", (160, 14.7, 0.7, 8.5, 2.0)),
    ("Banana", "Musaceae", "Zingiberales", "Musa", (96, 0.2, 17.2, 22.0, 1.0)),
    ("Blueberry", "Ericaceae", "Ericales", "Vaccinium", (29, 0.4, 10.0, 14.5, 0.7)),
    ("Cherry", "Rosaceae", "Rosales", "Prunus", (50, 0.3, 8.0, 12.0, 1.0)),
    ("Fig", "Moraceae", "Rosales", "Ficus", (74, 0.3, 16.0, 19.0, 0.8)),
    ("Grape", "Vitaceae", "Vitales", "Vitis", (69, 0.2, 16.0, 18.1, 0.7)),
    ("Guava", "Myrtaceae", "Myrtales", "Psidium", (68, 1.0, 9.0, 14.0, 2.6)),
    ("Kiwi", "Actinidiaceae", "Ericales", "Actinidia", (61, 0.5, 9.0, 15.0, 1.1)),
    ("Lemon", "Rutaceae", "Sapindales", "Citrus", (29, 0.3, 2.5, 9.0, 1.1)),
    ("Lime", "Rutaceae", "Sapindales", "Citrus", (25, 0.1, 1.7, 8.4, 0.3)),
    ("Lychee", "Sapindaceae", "Sapindales", "Litchi", (66, 0.44, 15.0, 17.0, 0.8)),
    ("Mango", "Anacardiaceae", "Sapindales", "Mangifera", (60, 0.38, 13.7, 15.0, 0.82)),
    ("Melon", "Cucurbitaceae", "Cucurbitales", "Cucumis", (34, 0.0, 8.0, 8.0, 0.0)),
    ("Orange", "Rutaceae", "Sapindales", "Citrus", (43, 0.2, 8.2, 8.3, 1.0)),
    ("Papaya", "Caricaceae", "Brassicales", "Carica", (43, 0.4, 7.8, 10.8, 0.5)),
    ("Peach", "Rosaceae", "Rosales", "Prunus", (39, 0.25, 8.4, 9.5, 0.9)),
    ("Pear", "Rosaceae", "Rosales", "Pyrus", (57, 0.1, 10.0, 15.0, 0.4)),
    ("Pineapple", "Bromeliaceae", "Poales", "Ananas", (50, 0.12, 9.85, 13.12, 0.54)),
    ("Plum", "Rosaceae", "Rosales", "Prunus", (46, 0.28, 9.92, 11.4, 0.7)),
    ("Pomegranate", "Lythraceae", "Myrtales", "Punica", (83, 1.2, 13.7, 18.7, 1.7)),
    ("Raspberry", "Rosaceae", "Rosales", "Rubus", (53, 0.7, 4.4, 12.0, 1.2)),
    ("Strawberry", "Rosaceae", "Rosales", "Fragaria", (29, 0.4, 5.4, 5.5, 0.8)),
    ("Tomato", "Solanaceae", "Solanales", "Solanum", (74, 0.2, 2.6, 3.9, 0.9)),
    ("Watermelon", "Cucurbitaceae", "Cucurbitales", "Citrullus", (30, 0.2, 6.0, 8.0, 0.6)),
]


def _fruit(index: int) -> dict[str, Any]:
    name, family, order, genus, (calories, fat, sugar, carbohydrates, protein) = _FRUITS[index]
    return {
        "name": name,
        "id": index + 1,
        "family": family,
        "order": order,
        "genus": genus,
        "nutritions": {
            "calories": calories,
            "fat": fat,
            "sugar": sugar,
            "carbohydrates": carbohydrates,
            "protein": protein,
        },
    }


def fruityvice(path: str, query: Query) -> Reply:
    parts = path.split("/")[3:]  # /api/fruit/...
    fruits = [_fruit(index) for index in range(len(_FRUITS))]
    match parts:
        case ["all"]:
            return _json(fruits)  # long: over the 3000 characters the tool passes on
        case [("family" | "genus" | "order") as field_name, value]:
            chosen = [fruit for fruit in fruits if fruit[field_name] == value]
            if chosen:
                return _json(chosen)
        case [name]:
            chosen = [fruit for fruit in fruits if fruit["name"].lower() == name.lower()]
            if chosen:
                return _json(chosen[0])
    return _json({"error": "Not found"}, 404)


# Cataas -----------------------------------------------------------------------------------------------------


def cataas(path: str, query: Query) -> Reply:
    if path == "/api/tags":
        return _json(["cute", "orange", "sleepy", "tabby", "kitten"])
    if path == "/api/count":
        return _json({"count": 1923})
    if path == "/api/cats":
        return _json([{"_id": "c4t1", "tags": ["cute"], "mimetype": "image/jpeg"}])
    if path == "/cat" or path.startswith("/cat/"):
        if _one(query, "json") == "true":
            return _json(
                {"_id": "c4t2", "mimetype": "image/jpeg", "size": len(JPEG), "tags": ["cute"], "url": "/cat/c4t2"}
            )
        return Reply(200, "image/jpeg", JPEG)
    return _json({"message": "Not found"}, 404)


# CurrencyBeacon ---------------------------------------------------------------------------------------------

_RATES = {"EUR": 0.8987, "GBP": 0.7771, "JPY": 141.73, "CAD": 1.3198, "USD": 1.0, "THB": 34.21}


def currencybeacon(path: str, query: Query) -> Reply:
    meta = {"code": 200, "disclaimer": "Usage subject to terms: https://currencybeacon.com/terms"}
    if _one(query, "api_key") != KEYS["CurrencyBeacon", "api_key"]:
        return _json(
            {"meta": {"code": 401, "error_type": "Unauthorized", "error_detail": "Invalid API key"}, "response": []},
            401,
        )
    base = _one(query, "base") or "USD"
    symbols = (_one(query, "symbols") or "EUR").split(",")

    def rates(shift: float = 0.0) -> dict[str, float]:
        return {symbol: round(_RATES.get(symbol, 1.0) / _RATES.get(base, 1.0) + shift, 4) for symbol in symbols}

    if path == "/v1/latest":
        return _json({"meta": meta, "response": {"date": "2023-07-21T12:00:00Z", "base": base, "rates": rates()}})
    if path == "/v1/historical":
        return _json({"meta": meta, "response": {"date": _one(query, "date"), "base": base, "rates": rates(0.01)}})
    if path == "/v1/timeseries":
        start, end = _one(query, "start_date"), _one(query, "end_date")
        return _json({"meta": meta, "response": {start: rates(-0.01), end: rates(0.01)}})
    if path == "/v1/convert":
        source, target, amount = _one(query, "from") or "", _one(query, "to") or "", _one(query, "amount") or "0"
        value = round(float(amount) * _RATES.get(target, 1.0) / _RATES.get(source, 1.0), 2)
        return _json(
            {"meta": meta, "response": {"from": source, "to": target, "amount": float(amount), "value": value}}
        )
    return _json({"meta": {"code": 404, "error_type": "Not Found"}, "response": []}, 404)


ANSWERS: dict[str, Callable[[str, Query], Reply]] = {
    "date.nager.at": nager,
    "airport-web.appspot.com": airportsapi,
    "api.aviationapi.com": aviationapi,
    "api.chucknorris.io": chucknorris,
    "uselessfacts.jsph.pl": uselessfacts,
    "api.weatherstack.com": weatherstack,
    "api.dictionaryapi.dev": dictionary,
    "api.wolframalpha.com": wolframalpha,
    "www.fruityvice.com": fruityvice,
    "cataas.com": cataas,
    "api.currencybeacon.com": currencybeacon,
}


def recorded_answer(host: str, target: str) -> Reply:
    """The recorded answer of `host` to one request target (path and query, as the request line holds it)."""
    split = urlsplit(target)
    return ANSWERS[host](split.path, parse_qs(split.query, keep_blank_values=True))


# ---------------------------------------------------------------------------------------------- certificates


@dataclass(frozen=True)
class Certificates:
    ca: Path  # the CA certificate (PEM): what SSL_CERT_FILE names
    hosts: dict[str, tuple[Path, Path]]  # host -> (certificate chain, key)


def _openssl(*args: str, cwd: Path) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True, timeout=60)


def make_certificates(folder: Path, hosts: list[str]) -> Certificates:
    """A throwaway CA and one certificate per host signed by it (EC P-256 keys: quick to make).

    Raises:
        FileNotFoundError: there is no openssl command (callers skip: check `shutil.which` first).
    """
    if shutil.which("openssl") is None:
        raise FileNotFoundError("openssl")
    folder.mkdir(parents=True, exist_ok=True)
    curve = ("-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes")
    _openssl(
        "req",
        "-x509",
        *curve,
        "-keyout",
        "ca.key",
        "-out",
        "ca.pem",
        "-days",
        "2",
        "-subj",
        "/CN=pytest-tooleval test CA",
        "-addext",
        "basicConstraints=critical,CA:TRUE",
        "-addext",
        "keyUsage=critical,keyCertSign,cRLSign",
        cwd=folder,
    )
    issued: dict[str, tuple[Path, Path]] = {}
    for serial, host in enumerate(hosts, start=1):
        (folder / f"{host}.ext").write_text(
            "basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=serverAuth\n"
            f"subjectAltName=DNS:{host}\nsubjectKeyIdentifier=hash\nauthorityKeyIdentifier=keyid:always\n"
        )
        _openssl(
            "req", "-new", *curve, "-keyout", f"{host}.key", "-out", f"{host}.csr", "-subj", f"/CN={host}", cwd=folder
        )
        _openssl(
            "x509",
            "-req",
            "-in",
            f"{host}.csr",
            "-CA",
            "ca.pem",
            "-CAkey",
            "ca.key",
            "-set_serial",
            str(serial),
            "-days",
            "2",
            "-out",
            f"{host}.pem",
            "-extfile",
            f"{host}.ext",
            cwd=folder,
        )
        issued[host] = (folder / f"{host}.pem", folder / f"{host}.key")
    return Certificates(folder / "ca.pem", issued)


# ---------------------------------------------------------------------------------------------- servers


@dataclass(frozen=True)
class Received:
    """One request as a stand-in API received it."""

    scheme: str
    api: str  # the host whose stand-in received it
    host: str  # the Host header
    method: str
    target: str  # the request line's target: path and query, exactly as sent
    headers: dict[str, str]  # names lower-cased
    body: bytes
    reply: Reply


class _ApiHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _StandIn

    def _answer(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        reply = recorded_answer(self.server.host, self.path)
        headers = {name.lower(): value for name, value in self.headers.items()}
        self.server.log(
            Received(
                self.server.scheme,
                self.server.host,
                headers.get("host", ""),
                self.command,
                self.path,
                headers,
                body,
                reply,
            )
        )
        self.send_response(reply.status)
        if reply.content_type:
            self.send_header("Content-Type", reply.content_type)
        if reply.status not in (204, 304):
            self.send_header("Content-Length", str(len(reply.body)))
        self.send_header("Connection", "close")
        self.end_headers()
        if reply.status not in (204, 304):
            self.wfile.write(reply.body)
        self.close_connection = True

    do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = _answer

    def log_message(self, *args: object) -> None:
        pass


class _StandIn(ThreadingHTTPServer):
    """One API host on 127.0.0.1; with a TLS context it speaks HTTPS (the handshake runs in the request's thread)."""

    daemon_threads = True

    def __init__(
        self,
        scheme: str,
        host: str,
        tls: ssl.SSLContext | None,
        log: Callable[[Received], None],
        handshake_failures: list[str],
    ) -> None:
        super().__init__(("127.0.0.1", 0), _ApiHandler)
        self.scheme, self.host, self.tls, self.log = scheme, host, tls, log
        self.handshake_failures = handshake_failures

    @property
    def port(self) -> int:
        return int(self.server_address[1])

    def finish_request(self, request: Any, client_address: Any) -> None:
        if self.tls is None:
            super().finish_request(request, client_address)
            return
        try:
            secured = self.tls.wrap_socket(request, server_side=True)
        except (ssl.SSLError, OSError) as exc:  # the client refused our certificate, say
            self.handshake_failures.append(f"{self.host}: {exc}")
            return
        with secured:
            super().finish_request(secured, client_address)


def _relay(first: socket.socket, second: socket.socket) -> None:
    """Copy bytes both ways until either side closes."""
    sockets = [first, second]
    with contextlib.suppress(OSError):
        while True:
            readable, _, _ = select.select(sockets, [], [], 30)
            if not readable:
                return
            for source in readable:
                data = source.recv(65536)
                if not data:
                    return
                (second if source is first else first).sendall(data)


class _ProxyHandler(socketserver.StreamRequestHandler):
    server: _Proxy

    def handle(self) -> None:
        request_line = self.rfile.readline(65537).decode("latin-1").rstrip("\r\n")
        head: list[str] = []
        while (line := self.rfile.readline(65537).decode("latin-1").rstrip("\r\n")) != "":
            head.append(line)
        method, target, _version = request_line.split(" ", 2)
        if method == "CONNECT":
            host, _, port = target.rpartition(":")
            self.server.connects.append(target)
            address = self.server.routes.get(("https", host, int(port)))
            if address is None:  # as a proxy that cannot resolve the name answers
                self.wfile.write(b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
                return
            with socket.create_connection(address, timeout=30) as upstream:
                self.wfile.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
                _relay(self.connection, upstream)
            return
        split = urlsplit(target)  # absolute-form: a plain-HTTP request for the proxy to forward
        self.server.forwarded.append(target)
        address = self.server.routes.get(("http", split.hostname or "", split.port or 80))
        if address is None:
            self.wfile.write(b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
            return
        headers = [line for line in head if not line.lower().startswith(("proxy-", "connection:"))]
        length = next((int(line.split(":", 1)[1]) for line in head if line.lower().startswith("content-length:")), 0)
        body = self.rfile.read(length) if length else b""
        origin_form = split.path + (f"?{split.query}" if split.query else "")
        with socket.create_connection(address, timeout=30) as upstream:
            upstream.sendall(
                "\r\n".join([f"{method} {origin_form} HTTP/1.1", *headers, "Connection: close", "", ""]).encode(
                    "latin-1"
                )
                + body
            )
            _relay(self.connection, upstream)


class _Proxy(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, routes: dict[tuple[str, str, int], tuple[str, int]]) -> None:
        super().__init__(("127.0.0.1", 0), _ProxyHandler)
        self.routes = routes
        self.connects: list[str] = []  # every CONNECT target, answered or refused
        self.forwarded: list[str] = []  # every absolute-form target


@dataclass
class Internet:
    """The 11 stand-ins behind one proxy, started on entry and stopped on exit.

    Attributes:
        received: every request a stand-in answered, in arrival order.
        handshake_failures: TLS handshakes a stand-in saw fail (a client that did not trust the test CA).
    """

    certificates: Certificates
    received: list[Received] = field(default_factory=list)
    handshake_failures: list[str] = field(default_factory=list)
    _servers: list[socketserver.BaseServer] = field(default_factory=list)
    _proxy: _Proxy | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def _log(self, entry: Received) -> None:
        with self._lock:
            self.received.append(entry)

    def __enter__(self) -> Internet:
        routes: dict[tuple[str, str, int], tuple[str, int]] = {}
        for scheme, host in API_HOSTS.values():
            tls = None
            if scheme == "https":
                tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
                tls.load_cert_chain(*self.certificates.hosts[host])
            server = _StandIn(scheme, host, tls, self._log, self.handshake_failures)
            self._start(server)
            routes[scheme, host, 443 if scheme == "https" else 80] = ("127.0.0.1", server.port)
        self._proxy = _Proxy(routes)
        self._start(self._proxy)
        return self

    def _start(self, server: socketserver.BaseServer) -> None:
        self._servers.append(server)
        # a short poll: stopping the twelve servers one after the other stays quick
        threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()

    def __exit__(self, *exc: object) -> None:
        for server in self._servers:
            server.shutdown()
            server.server_close()

    @property
    def proxy_url(self) -> str:
        assert self._proxy is not None
        return f"http://127.0.0.1:{self._proxy.server_address[1]}"

    @property
    def connects(self) -> list[str]:
        assert self._proxy is not None
        return list(self._proxy.connects)

    @property
    def forwarded(self) -> list[str]:
        assert self._proxy is not None
        return list(self._proxy.forwarded)

    def environ(self) -> dict[str, str]:
        """The standard variables that send a client's API traffic here and make it trust the test CA."""
        return {
            "https_proxy": self.proxy_url,
            "http_proxy": self.proxy_url,
            "no_proxy": "127.0.0.1,localhost",
            "SSL_CERT_FILE": str(self.certificates.ca),
        }


@contextlib.contextmanager
def internet(folder: Path) -> Iterator[Internet]:
    """Certificates made in `folder`, and the stand-ins running behind their proxy."""
    hosts = [host for scheme, host in API_HOSTS.values() if scheme == "https"]
    with Internet(make_certificates(folder, hosts)) as running:
        yield running
