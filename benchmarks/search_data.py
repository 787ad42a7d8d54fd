"""The search benchmark's data: users, conversations and items written by set-based SQL,
with message text drawn from a Zipf-distributed vocabulary, and the queries asked of it.

A pool of sentences is made in Python (words of a made-up vocabulary, the r-th most
frequent drawn with probability proportional to 1/r, as in natural language) and stored
in a scratch table; one ``INSERT ... SELECT`` (a recursive CTE on SQLite,
``generate_series`` on PostgreSQL) then writes every item, each message one to six
sentences of the pool picked by a hash of its number. Conversation ``k`` belongs to user
``k % users``; item ``n`` goes to a conversation picked by a permutation of ``n %
conversations``, so every conversation's items are spread over the whole id range (as
when many people chat at once). Of each six items of a conversation, two are user
messages (one or two sentences), two the assistant's (six sentences) and two a tool call
and its output (not searched by default). A sentence is 6 to 18 words, about 60 characters.
"""

from __future__ import annotations

import math
import random
from collections import Counter
from dataclasses import dataclass
from typing import Any, NamedTuple

VOCABULARY, SENTENCES = 30_000, 20_000
_ONSETS = [*"bcdfghjklmnprstvwz", "br", "cl", "dr", "fl", "gr", "pl", "pr", "sk", "st", "tr"]
_VOWELS = [*"aeiou", "ai", "ea", "ie", "ou"]
_CODAS = ["", "", "n", "r", "s", "l", "t", "m", "nd", "st"]


@dataclass(frozen=True)
class Scale:
    users: int
    conversations: int
    items_per_conversation: int

    @property
    def items(self) -> int:
        return self.conversations * self.items_per_conversation


class Query(NamedTuple):
    kind: str
    owner_index: int  # 0 .. users - 1
    text: str


def vocabulary(rng: random.Random) -> list[str]:
    """Made-up words, most frequent first (shorter words tend to be more frequent)."""
    words: set[str] = set()
    while len(words) < VOCABULARY:
        syllables = rng.choice((1, 2, 2, 3, 3, 4))
        word = "".join(rng.choice(_ONSETS) + rng.choice(_VOWELS) for _ in range(syllables))
        words.add(word + rng.choice(_CODAS))
    jitter = {word: len(word) + rng.random() * 6 for word in sorted(words)}
    return sorted(jitter, key=jitter.__getitem__)


def sentences(words: list[str], count: int, rng: random.Random) -> list[str]:
    """``count`` sentences of 6 to 18 words, Zipf-distributed (exponent 1)."""
    cumulative, total = [], 0.0
    for rank in range(1, len(words) + 1):
        total += 1.0 / rank
        cumulative.append(total)
    made = []
    for _ in range(count):
        picked = rng.choices(words, cum_weights=cumulative, k=rng.randint(6, 18))
        picked[0] = picked[0].capitalize()
        if len(picked) > 9:
            picked[len(picked) // 2] += ","
        made.append(" ".join(picked) + rng.choice("..?!"))
    return made


def pick(number: str, salt: int, pool: int) -> str:
    """SQL: the index of a pool sentence for item ``number`` (a multiplicative hash)."""
    return f"(({number} * 2654435761 + {salt * 40503}) %% 4294967291) %% {pool}"


def populate(connection: Any, scale: Scale, pool: list[str], first_owner: int) -> None:
    """Write the conversations and items of ``scale`` with set-based SQL, for the users
    whose primary keys are ``first_owner`` onwards (no search index is kept meanwhile:
    the caller installs it afterwards)."""
    from django_agent_sessions.models import AgentSession, SessionItem

    postgres = connection.vendor == "postgresql"
    quote = connection.ops.quote_name
    sessions, items = quote(AgentSession._meta.db_table), quote(SessionItem._meta.db_table)
    stamp = connection.ops.adapt_datetimefield_value(AgentSession().created_at)
    conversations, size = scale.conversations, len(pool)
    sentence = "(SELECT body FROM bench_sentence WHERE id = {})"
    with connection.cursor() as cursor:
        cursor.execute("CREATE TABLE bench_sentence (id integer PRIMARY KEY, body text)", [])
        cursor.executemany(
            "INSERT INTO bench_sentence (id, body) VALUES (%s, %s)", list(enumerate(pool))
        )
        cursor.execute(f"SELECT COALESCE(MAX(id), 0) FROM {sessions}", [])
        first = cursor.fetchone()[0] + 1
        cursor.execute(
            f"INSERT INTO {sessions} (session_id, owner_id, title, metadata, item_count, "
            f"created_at, updated_at) SELECT 'bench-' || x, {first_owner} + x %% {scale.users}, "
            f"substr({sentence.format(pick('x', 9, size))}, 1, 40), '{{}}', "
            f"{scale.items_per_conversation}, %s, %s FROM {_numbers(postgres, conversations)}",
            [stamp, stamp],
        )
        kind = f"(x / {conversations}) %% 6"
        user, assistant = (
            " || ' ' || ".join(sentence.format(pick("x", salt, size)) for salt in salts)
            for salts in ((1,), range(1, 7))
        )
        text = (
            f"CASE WHEN {kind} = 0 THEN {user} WHEN {kind} = 4 THEN {user} || ' ' || "
            f"{sentence.format(pick('x', 7, size))} WHEN {kind} IN (3, 5) THEN {assistant} END"
        )
        cursor.execute(
            f"INSERT INTO {items} (session_id, payload, item_type, role, call_id, preview, "
            "search_text, created_at) "
            f"SELECT {first} + ((x %% {conversations}) * 7919) %% {conversations}, "
            f"{_payload(postgres, conversations)}, CASE kind WHEN 1 THEN 'function_call' "
            "WHEN 2 THEN 'function_call_output' ELSE 'message' END, CASE WHEN kind IN (0, 4) "
            "THEN 'user' WHEN kind IN (3, 5) THEN 'assistant' ELSE '' END, CASE kind WHEN 1 "
            f"THEN 'call_' || x WHEN 2 THEN 'call_' || (x - {conversations}) ELSE '' END, "
            "substr(COALESCE(body, ''), 1, 200), COALESCE(body, ''), %s "
            f"FROM (SELECT x, {kind} AS kind, {text} AS body, "
            f"{sentence.format(pick('x', 4, size))} AS output "
            # The fence keeps the text computed once per item, not once per use of it.
            f"FROM {_numbers(postgres, scale.items)} {'' if postgres else 'LIMIT -1 '}OFFSET 0) t",
            [stamp],
        )
        cursor.execute("DROP TABLE bench_sentence", [])


def _payload(postgres: bool, conversations: int) -> str:
    """SQL: the item's JSON as the SDK gives it (its text is ``body``, a tool's ``output``)."""
    build, array = (
        ("json_build_object", "json_build_array") if postgres else ("json_object", "json_array")
    )
    cast = "::text" if postgres else ""
    part = f"{build}('type', 'output_text', 'text', body, 'annotations', {array}())"
    user = f"{build}('role', 'user', 'content', body){cast}"
    assistant = (
        f"{build}('type', 'message', 'role', 'assistant', 'status', 'completed', "
        f"'content', {array}({part})){cast}"
    )
    call = (
        f"{build}('type', 'function_call', 'call_id', 'call_' || x, 'name', 'lookup', "
        f"'arguments', '{{}}'){cast}"
    )
    output = (
        f"{build}('type', 'function_call_output', 'call_id', 'call_' || (x - {conversations}), "
        f"'output', output){cast}"
    )
    return (
        f"CASE WHEN kind IN (0, 4) THEN {user} WHEN kind IN (3, 5) THEN {assistant} "
        f"WHEN kind = 1 THEN {call} ELSE {output} END"
    )


def _numbers(postgres: bool, count: int) -> str:
    """SQL: the rows ``n.x`` = 0 .. count - 1."""
    if postgres:
        return f"generate_series(0, {count - 1}) AS n(x)"
    return (
        f"(WITH RECURSIVE m(x) AS (SELECT 0 UNION ALL SELECT x + 1 FROM m WHERE x < {count - 1}) "
        "SELECT x FROM m) AS n"
    )


def queries(pool: list[str], words: list[str], users: int, count: int, seed: int) -> list[Query]:
    """``count`` queries of random users, in equal shares of each kind: one common word,
    a word of middling frequency, a rare one, one that occurs nowhere, a three-letter
    prefix, a letter, two words, three words."""
    rng = random.Random(seed)
    frequency = Counter(
        word.strip(",.?!").lower() for sentence in pool for word in sentence.split()
    )
    ranked = [word for word in words if frequency[word]]
    common = ranked[:20]
    middling = [w for w in ranked if 20 <= frequency[w] <= 200]
    rare = [w for w in ranked if frequency[w] <= 2]
    makers = {
        "common word": lambda: rng.choice(common),
        "middling word": lambda: rng.choice(middling),
        "rare word": lambda: rng.choice(rare),
        "absent word": lambda: rng.choice(rare) + "qx",
        "prefix": lambda: rng.choice(middling)[:3],
        "one letter": lambda: rng.choice(common)[0],
        "two words": lambda: f"{rng.choice(middling)} {rng.choice(common)}",
        "three words": lambda: (
            f"{rng.choice(common)} {rng.choice(middling)} {rng.choice(ranked[:2000])}"
        ),
    }
    kinds = list(makers)
    return [
        Query(kinds[index % len(kinds)], rng.randrange(users), makers[kinds[index % len(kinds)]]())
        for index in range(count)
    ]


def percentile(sorted_values: list[float], fraction: float) -> float:
    """The nearest-rank percentile of already sorted values."""
    if not sorted_values:
        return 0.0
    return sorted_values[max(0, math.ceil(fraction * len(sorted_values)) - 1)]
