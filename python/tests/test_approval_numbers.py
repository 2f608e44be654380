"""Exact numbers in arguments given as JSON text (spec/APPROVALS.md §5 step 3): the same table the TypeScript verifier's
attack test holds (test/attacks/approvals-outsider-6.test.ts), and every double's own shortest text is exact unless an
integer past ±(2^53−1). Outsider 6's 8.sh: a grant of account …992 must not authorise text naming …993."""
import random
import struct

from stepchain.approval import call_form, exact_number, numbers_exact

TABLE = [("0", True), ("-0", True), ("1.0", True), ("0.1", True), ("-12.50", True), ("2.5E+3", True),
         ("9007199254740991", True), ("9007199254740992", False), ("9007199254740993", False),
         ("0.10000000000000001", False), ("1e400", False), ("1e-400", False)]


def test_table():
    for token, exact in TABLE:
        assert exact_number(token) is exact, token
    assert numbers_exact('{"a":"9007199254740993","b":[1,-2.5,{"c":3e-7}]}')
    assert not numbers_exact('{"a":[1,{"b":9007199254740993}]}')


def test_every_double_shortest_text_is_exact():
    rng = random.Random(8)
    for _ in range(5000):
        d = struct.unpack("<d", rng.getrandbits(64).to_bytes(8, "little"))[0]
        if d != d or d in (float("inf"), float("-inf")):
            continue
        unsafe = d.is_integer() and abs(d) > 2**53 - 1
        assert exact_number(repr(d).replace("e+", "e")) is (not unsafe), repr(d)


def test_rounded_text_is_another_call():
    granted = call_form("transfer", '{"to_account":9007199254740992,"eur":5000}')
    assert call_form("transfer", '{"to_account":9007199254740993,"eur":5000}') != granted
    assert call_form("pay", '{ "amount": 0.1, "n": 1.0e2 }') == call_form("pay", {"amount": 0.1, "n": 100})
