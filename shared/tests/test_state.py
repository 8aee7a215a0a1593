import json

import numpy as np
import pytest

from icml26_shared import state as st


def test_round_trip_keeps_arrays_and_non_finite_values_bit_for_bit():
    obj = {
        "q": np.array([[1.5, np.inf], [-np.inf, np.nan]]),
        "n": np.array(3, dtype=np.int64),
        "alpha": 0.1,
        "top": float("inf"),
        "flags": [True, None, "aci"],
    }
    text = st.dumps_state(obj)
    json.loads(text, parse_constant=lambda c: pytest.fail(f"bare {c} in checkpoint"))
    back = st.loads_state(text)
    np.testing.assert_array_equal(back["q"], obj["q"])
    assert back["q"].dtype == np.float64 and back["n"].dtype == np.int64 and back["n"].shape == ()
    assert back["top"] == float("inf") and back["alpha"] == 0.1 and back["flags"] == obj["flags"]


def test_unknown_types_are_refused():
    with pytest.raises(TypeError, match="state must hold numbers"):
        st.encode_state({"f": object()})


def test_mismatched_config_names_the_field():
    st.check_same_config(
        {"gamma": 0.5, "method": "aci"}, {"gamma": 0.5, "method": "aci"}, owner="X"
    )
    with pytest.raises(ValueError, match=r"saved with gamma=0.5, but this X has gamma=0.001"):
        st.check_same_config({"gamma": 0.5}, {"gamma": 0.001}, owner="X")
    with pytest.raises(ValueError, match=r"saved with eta='<unset>', but this X has eta=0.1"):
        st.check_same_config({}, {"eta": 0.1}, owner="X")
    enc = st.encode_state({"grid": np.array([1.0, 2.0])})
    with pytest.raises(ValueError, match="grid"):
        st.check_same_config(enc, {"grid": np.array([1.0, 3.0])}, owner="X")
    st.check_same_config(enc, {"grid": np.array([1.0, 2.0])}, owner="X")


def test_truncated_and_foreign_files_are_named(tmp_path):
    from icml26_shared.state import StateFileError, dumps_state, read_json, reading

    good = tmp_path / "state.json"
    good.write_text(dumps_state({"q": np.array([1.0, np.inf])}))
    assert read_json(good)["q"][1] == np.inf
    cut = tmp_path / "cut.json"
    cut.write_text(good.read_text()[:-5])
    with pytest.raises(StateFileError, match=r"cut\.json: cannot read it as a JSON state file"):
        read_json(cut)
    npz = tmp_path / "weights.npz"
    npz.write_bytes(b"PK\x03\x04 not really a zip")
    with pytest.raises(StateFileError, match=r"weights\.npz: cannot read it as arrays"):
        with reading(npz, "arrays"):
            np.load(npz)["w"]
    with pytest.raises(FileNotFoundError):
        read_json(tmp_path / "missing.json")


def test_state_files_round_trip_and_name_foreign_ones(tmp_path):
    from icml26_shared.state import (
        StateFileError,
        dumps_state,
        load_state_file,
        loads_state_text,
        save_state_file,
    )

    def build(state):
        return state["q"] + 1

    path = save_state_file(tmp_path / "s.json", dumps_state({"q": 1}))
    assert load_state_file(path, "a toy state", build) == 2
    other = save_state_file(tmp_path / "other.json", dumps_state({"weights": [1]}))
    with pytest.raises(StateFileError, match=r"other\.json: cannot read it as a toy state"):
        load_state_file(other, "a toy state", build)
    with pytest.raises(TypeError, match="text must be the str of to_json"):
        loads_state_text(3, "a toy state")
    with pytest.raises(StateFileError, match="the JSON text given to from_json"):
        loads_state_text('{"q": ', "a toy state")
