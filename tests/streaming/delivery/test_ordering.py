"""Sequencer: a run's events reach the socket in order, once, whatever the layer did."""

from __future__ import annotations

from django_agent_sessions.streaming.delivery.ordering import Sequencer


def event(seq: int, run_id: str = "r") -> dict[str, object]:
    return {"type": "text.delta", "run_id": run_id, "seq": seq, "delta": str(seq)}


def seqs(events) -> list[int]:
    return [e["seq"] for e in events]


def test_in_order_events_pass_straight_through():
    sequencer = Sequencer()
    assert [seqs(sequencer.push(event(n))) for n in (1, 2, 3)] == [[1], [2], [3]]


def test_swapped_events_are_put_back_in_order():
    sequencer = Sequencer()
    assert seqs(sequencer.push(event(1))) == [1]
    assert sequencer.push(event(3)) == []
    assert sequencer.has_gap("r")
    assert seqs(sequencer.push(event(2))) == [2, 3]
    assert not sequencer.has_gap("r")


def test_a_run_that_arrives_with_its_second_event_first_still_starts_at_one():
    sequencer = Sequencer()
    assert sequencer.push(event(2)) == []
    assert seqs(sequencer.push(event(1))) == [1, 2]


def test_duplicates_and_events_in_the_snapshot_are_dropped():
    sequencer = Sequencer()
    sequencer.expect("r", 5)
    assert sequencer.push(event(3)) == []
    assert seqs(sequencer.push(event(5))) == [5]
    assert sequencer.push(event(5)) == []


def test_what_is_held_past_a_snapshot_is_released_after_it():
    sequencer = Sequencer()
    sequencer.push(event(1))
    assert sequencer.push(event(3)) == []  # 2 is missing: held
    assert sequencer.push(event(4)) == []
    assert sequencer.has_gap("r")
    sequencer.expect("r", 3)  # a snapshot covered up to 2
    assert seqs(sequencer.release("r")) == [3, 4]
    assert not sequencer.has_gap("r")
    assert sequencer.push(event(2)) == []  # too late: the snapshot had it
    assert sequencer.release("r") == []


def test_runs_are_sequenced_independently_and_other_frames_pass():
    sequencer = Sequencer()
    assert seqs(sequencer.push(event(1, "a"))) == [1]
    assert seqs(sequencer.push(event(1, "b"))) == [1]
    assert sequencer.push({"type": "other"}) == [{"type": "other"}]


def test_an_end_numbered_behind_what_was_sent_is_still_sent():
    """A lost worker's end is numbered from its last lease renewal."""
    sequencer = Sequencer()
    for seq in (1, 2, 3, 4):
        sequencer.push(event(seq))
    lost = {"type": "run.failed", "run_id": "r", "seq": 3, "error": {"code": "worker_lost"}}
    assert sequencer.push(lost) == [lost]
    assert sequencer.push(event(2)) == []  # other events behind stay dropped


def test_events_held_elsewhere_that_fill_the_gap_leave_nothing_behind():
    sequencer = Sequencer()
    sequencer.expect("r", 3)
    held = [event(3), event(5), event(4, "other")]
    assert sequencer.is_behind("r", 4)
    assert sequencer.is_behind("r", 5, holding=held)  # 4 is missing
    assert not sequencer.is_behind("r", 3, holding=held)
    sequencer.push(event(4))  # held by the sequencer itself
    assert sequencer.is_behind("r", 5)
    assert not sequencer.is_behind("r", 5, holding=held)


def test_what_the_socket_has_is_never_taken_back():
    sequencer = Sequencer()
    sequencer.expect("r", 6)  # a history frame showed the run's pause, up to 5
    sequencer.expect("r", 4)  # the snapshot that came with it was taken before
    assert seqs(sequencer.push(event(5))) == []
    assert seqs(sequencer.push(event(6))) == [6]
