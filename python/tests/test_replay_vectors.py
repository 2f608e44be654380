"""vectors/replay.json (spec/REPLAY.md §9): matching keys, matching under each mode, and the classification of
divergences. The recordings are written by this package's run recorder, as §9 builds them: run.started at 0,
then per op its started record and its outcome; a last `run` op is the run's own outcome record."""
import pytest
from conftest import cases, load_vectors

from stepchain.diff import VOLATILE_PATTERNS, diff
from stepchain.replay import Replay, ReplayError, explain, ignore_set, match_key, model_projection, replay_from, tool_projection
from stepchain.runtime import start_run

REPLAY = load_vectors("replay.json")


def test_the_volatile_list_is_the_packages():
    assert REPLAY["volatile"] == VOLATILE_PATTERNS


@pytest.mark.parametrize("c", cases(REPLAY, lambda c: c["group"] == "key"))
def test_key(c):
    proj = model_projection(c["request"]) if c["kind"] == "model" else tool_projection(c["request"])
    assert match_key(c["kind"], proj, ignore_set(c["ignore"], c["volatile"])) == c["key"]


def _record(root, run_id, ops):
    run = start_run(str(root), run_id=run_id, input="task", fsync="none")
    for op in ops:
        answer = op.get("answer", {})
        if op["kind"] == "model":
            call = run.begin_model(**op["request"])
            call.fail(answer["error"]) if "error" in answer else call.complete(answer.get("result"))
        elif op["kind"] == "run":
            run.fail(answer["error"]) if "error" in answer else run.complete(answer.get("result"))
        else:
            effect = run.begin_tool(op["request"]["name"], op["request"]["arguments"])
            effect.fail(answer["error"]) if "error" in answer else effect.complete(answer.get("result"))
    return run


@pytest.mark.parametrize("c", cases(REPLAY, lambda c: c["group"] == "match"))
def test_match(c, tmp_path):
    run = _record(tmp_path, "rec", c["recorded"])
    replay = replay_from(run.journal, mode=c["mode"])
    got = []
    for r in c["requests"]:
        try:
            a = replay.next_model_result(r["request"]) if r["kind"] == "model" else replay.next_tool_result(r["request"])
            got.append({"source": "recorded", "seq": a["seq"], "ordinal": a["ordinal"], "result": a["result"]} if a["source"] == "recorded"
                       else {"source": "live"})
        except ReplayError as e:
            got.append({"error": e.code, **({"diff": [{"path": f["path"], "kind": f["kind"]} for f in e.diff]} if e.diff else {}),
                        **({"seq": e.location["seq"]} if "seq" in e.location else {})})
            break
    assert got == c["expect"]


@pytest.mark.parametrize("c", cases(REPLAY, lambda c: c["group"] == "classify"))
def test_classify(c, tmp_path):
    a, b = _record(tmp_path, "a", c["a"]), _record(tmp_path, "b", c["b"])
    ra, rb = list(a.journal.read()), list(b.journal.read())
    report = diff({"genesis": {"format": "stepchain/v2"}, "records": ra}, {"genesis": {"format": "stepchain/v2"}, "records": rb}, {"all": True})
    assert explain(report, ra, rb) == c["expect"]
