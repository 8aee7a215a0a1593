import sys
import textwrap

import numpy as np
import pytest

from shnap import CallableRiskModel, SubprocessRiskModel, sybil_adapter_path


def _script(tmp_path, body, name="stub.py"):
    path = tmp_path / name
    path.write_text(textwrap.dedent(body))
    return [sys.executable, str(path)]


def test_callable_model_checks_output():
    m = CallableRiskModel(lambda b: b.mean(axis=(1, 2, 3, 4)))
    out = m(np.ones((3, 1, 4, 4, 4), np.float32))
    np.testing.assert_allclose(out, 1.0)
    with pytest.raises(ValueError, match="non-finite"):
        CallableRiskModel(lambda b: np.full(len(b), np.nan))(np.ones((2, 1, 2, 2, 2)))
    with pytest.raises(TypeError, match="fn must be callable"):
        CallableRiskModel(3)


def test_subprocess_model_round_trip(tmp_path):
    cmd = _script(
        tmp_path,
        """
        import sys, numpy as np
        x = np.load(sys.argv[1])
        np.save(sys.argv[2], x.reshape(len(x), -1).sum(1))
        """,
    )
    m = SubprocessRiskModel(cmd)
    x = np.random.default_rng(0).normal(size=(2, 1, 4, 4, 4)).astype(np.float32)
    np.testing.assert_allclose(m(x), x.reshape(2, -1).sum(1), rtol=1e-5)


@pytest.mark.parametrize(
    ("body", "error", "match"),
    [
        ("import sys; sys.exit(3)", RuntimeError, "exited with status 3"),
        (
            "import sys, numpy as np; np.save(sys.argv[2], np.full(2, np.nan))",
            ValueError,
            "non-finite",
        ),
        (
            "import sys, numpy as np; np.save(sys.argv[2], np.zeros(5))",
            ValueError,
            r"\(2,\) logits",
        ),
        ("pass", RuntimeError, "wrote no output.npy"),
    ],
)
def test_subprocess_model_errors_are_clear(tmp_path, body, error, match):
    m = SubprocessRiskModel(_script(tmp_path, body))
    with pytest.raises(error, match=match):
        m(np.zeros((2, 1, 4, 4, 4), np.float32))


def test_subprocess_model_bad_input(tmp_path):
    with pytest.raises(ValueError, match="empty command"):
        SubprocessRiskModel([])
    m = SubprocessRiskModel(_script(tmp_path, "pass"))
    with pytest.raises(ValueError, match=r"\(B, 1, D, H, W\)"):
        m(np.zeros((2, 4, 4, 4), np.float32))


def test_sybil_adapter_with_a_stub_sybil(tmp_path, monkeypatch):
    """The real adapter script, run in a subprocess against a stub ``sybil`` package that
    records the PNG series it gets and returns risks from their mean intensity."""
    pytest.importorskip("PIL")
    pkg = tmp_path / "stubs" / "sybil"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text(
        textwrap.dedent(
            """
            import numpy as np
            from PIL import Image

            class Serie:
                def __init__(self, paths, file_type="dicom", voxel_spacing=None):
                    assert file_type == "png" and len(voxel_spacing) == 3
                    self.vol = np.stack([np.asarray(Image.open(p), float) for p in paths])

            class _Pred:
                def __init__(self, scores):
                    self.scores = scores

            class Sybil:
                def __init__(self, name):
                    self.name = name

                def predict(self, series):
                    out = []
                    for s in series:
                        assert s.vol.shape == (200, 256, 256), s.vol.shape
                        hu = s.vol - 1024
                        p = 1 / (1 + np.exp(-(hu.mean() + 500) / 100))
                        out.append([p * t / 6 for t in range(1, 7)])
                    return _Pred(out)
            """
        )
    )
    monkeypatch.setenv("PYTHONPATH", str(tmp_path / "stubs"))
    m = SubprocessRiskModel([sys.executable, str(sybil_adapter_path()), "--year", "6"])
    x = np.stack([np.full((1, 8, 8, 8), -0.5, np.float32), np.full((1, 8, 8, 8), 0.0, np.float32)])
    out = m(x)
    hu = (x.reshape(2, -1).mean(1) + 1) / 2 * 1400 - 1000
    p = 1 / (1 + np.exp(-(hu + 500) / 100))
    np.testing.assert_allclose(out, np.log(p / (1 - p)), atol=1e-3)
