"""Sparsity detection: cr.jacobian_sparsity and cr.hessian_sparsity, one rule family at a
time, against the non-zeros of the dense Jacobian (a pattern may hold too much, never
too little) and against the exact pattern where the rule is exact."""

import sys
import time

import numpy as np
import pytest

import chainrule as cr
from chainrule.sparse import pattern as pattern_module


def _pattern(f, x, **options):
    return cr.jacobian_sparsity(f, **options)(x).toarray()


def _nonzeros(f, x):
    jac = np.asarray(cr.jacfwd(f)(x))
    return jac.reshape(-1, np.size(x)) != 0


def test_the_result_is_a_boolean_csr_array_of_out_size_by_in_size():
    p = cr.jacobian_sparsity(lambda x: cr.sum(x.reshape(2, 3) ** 2, axis=0))(np.ones(6))
    assert p.format == "csr" and p.dtype == bool and p.shape == (3, 6)
    assert p.toarray().astype(int).tolist() == [[1, 0, 0, 1, 0, 0], [0, 1, 0, 0, 1, 0],
                                                [0, 0, 1, 0, 0, 1]]


def test_entrywise_operations_broadcast_their_operands_patterns():
    x = np.random.default_rng(0).random(6)
    f = lambda x: x.reshape(2, 3) * x[:3] + cr.exp(x[3:]).reshape(3, 1)[0]
    p = _pattern(f, x)
    rows = [[0, 3], [1, 4], [2, 5]]  # x[3:] at entry 0 of x[3:].reshape(3, 1)[0]: x[3]
    expected = np.zeros((6, 6), bool)
    for r in range(2):
        for c in range(3):
            expected[3 * r + c, [3 * r + c, c, 3]] = True
    assert (p == expected).all(), rows


def test_a_data_dependent_choice_keeps_both_sides_unless_the_pattern_is_local():
    x = np.array([-1.0, 2.0, -3.0, 4.0])
    f = lambda x: cr.where(x > 0, x, cr.roll(x, 1)) + cr.maximum(x[0], 0.0)
    global_ = _pattern(f, x)
    local = _pattern(f, x, local=True)
    assert global_[:, 0].all()  # maximum(x[0], 0) may depend on x[0] anywhere
    assert global_[1, [0, 1]].all() and global_[0, [3, 0]].all()
    # here x[0] < 0, so maximum(x[0], 0) does not depend on it; entry 1 takes x[1]
    assert local.astype(int).tolist() == [[0, 0, 0, 1], [0, 1, 0, 0], [0, 1, 0, 0],
                                          [0, 0, 0, 1]]
    assert not (local & ~global_).any()


def test_abs_and_clip_depend_on_their_operand_everywhere():
    x = np.array([0.0, -2.0, 5.0])
    for f in (cr.abs, lambda x: cr.clip(x, -1.0, 1.0)):
        assert (_pattern(f, x) == np.eye(3, dtype=bool)).all()
    assert not _pattern(lambda x: cr.clip(x, -1.0, 1.0), x, local=True)[[1, 2]].any()


def test_slices_shifts_and_concatenation_move_entries():
    x = np.arange(1.0, 6.0)
    f = lambda x: cr.concatenate([x[1:] - x[:-1], x[::-2], cr.zeros(1)])
    p = _pattern(f, x)
    assert p.astype(int).tolist() == [
        [1, 1, 0, 0, 0], [0, 1, 1, 0, 0], [0, 0, 1, 1, 0], [0, 0, 0, 1, 1],
        [0, 0, 0, 0, 1], [0, 0, 1, 0, 0], [1, 0, 0, 0, 0], [0, 0, 0, 0, 0]]


def test_reshape_transpose_stack_and_broadcast_to_are_exact():
    x = np.random.default_rng(1).random(6)
    f = lambda x: cr.stack([x.reshape(2, 3).T, cr.broadcast_to(x[:3], (2, 3)).T])
    assert (_pattern(f, x) == _nonzeros(f, x)).all()


def test_reductions_and_operations_along_an_axis_take_their_fibre():
    x = np.random.default_rng(2).random(12)
    m = lambda x: x.reshape(3, 4)
    maximum = lambda x: cr.max(m(x), axis=0)  # (on every entry of its column, anywhere)
    assert (_pattern(maximum, x) == np.tile(np.eye(4, dtype=bool), 3)).all()
    for f in (lambda x: cr.sum(m(x), axis=1), lambda x: cr.mean(m(x), axis=1, keepdims=True),
              lambda x: cr.softmax(m(x), axis=0), lambda x: cr.logsumexp(m(x), axis=-1)):
        assert (_pattern(f, x) == _nonzeros(f, x)).all()
    assert _pattern(lambda x: cr.cumsum(m(x), axis=1), x)[0].tolist() == [1, 1, 1, 1] + [0] * 8


def test_a_reduction_over_every_axis_depends_on_every_entry():
    assert _pattern(lambda x: cr.sum(x ** 2), np.ones(5)).all()


def test_a_contraction_skips_a_constant_operands_zeros():
    rng = np.random.default_rng(3)
    m = rng.random((5, 5)) * (rng.random((5, 5)) < 0.4)
    x = rng.random(5)
    for f in (lambda x: m @ x, lambda x: cr.einsum("ij,j->i", m, x),
              lambda x: cr.einsum("i,ij->j", x, m), lambda x: x @ m.T):
        assert (_pattern(f, x) == _nonzeros(f, x)).all()
    # '...' spelled out: the exact pattern (a 1 of its own is one more label); where the
    # '...' axes broadcast a 1 against another size, the dense rule's
    x2 = rng.random(10)
    for exact in (lambda x: cr.ravel(cr.einsum("...j,ij->...i", x.reshape(2, 5), m)),
                  lambda x: cr.ravel(cr.einsum("...ij,...j", m[:3], x.reshape(2, 1, 5)))):
        assert (_pattern(exact, x2) == _nonzeros(exact, x2)).all()
    broadcast = lambda x: cr.ravel(cr.einsum("...j,...j->...", x.reshape(2, 1, 5),
                                             m[:3].reshape(1, 3, 5)))
    assert _pattern(broadcast, x2).all() and not _nonzeros(broadcast, x2).all()
    # two traced operands: every product of the labels
    assert _pattern(lambda x: cr.outer(x[:2], x[2:]), x).sum() == 2 * 3 * 2


def test_indexed_updates_keep_x_and_scatter_the_values():
    x = np.arange(1.0, 7.0)
    added = _pattern(lambda x: x.at[np.array([0, 0, 2])].add(x[3:]), x)
    assert added[0].astype(int).tolist() == [1, 0, 0, 1, 1, 0]
    assert added[2].astype(int).tolist() == [0, 0, 1, 0, 0, 1]
    written = _pattern(lambda x: x.at[1:3].set(x[4:]), x)  # x[1:3] overwritten
    assert written[1].astype(int).tolist() == [0, 0, 0, 0, 1, 0]


def test_linear_algebra_on_a_stack_depends_on_its_own_matrix_only():
    x = np.random.default_rng(4).random(8) + 2 * np.tile(np.eye(2).ravel(), 2)
    p = _pattern(lambda x: cr.linalg.det(x.reshape(2, 2, 2)), x)
    assert p.astype(int).tolist() == [[1, 1, 1, 1, 0, 0, 0, 0], [0, 0, 0, 0, 1, 1, 1, 1]]


def test_an_operation_without_a_rule_depends_on_every_entry_and_is_counted():
    x = np.random.default_rng(5).random(4) + np.array([3.0, 0, 0, 3.0])
    before = pattern_module.dense_fallbacks["solve"]
    p = _pattern(lambda x: cr.linalg.solve(x.reshape(2, 2), np.ones(2)), x)
    assert p.all() and pattern_module.dense_fallbacks["solve"] == before + 1


def test_a_constant_result_depends_on_nothing():
    assert cr.jacobian_sparsity(lambda x: np.ones(3))(np.ones(2)).nnz == 0


def test_the_pattern_holds_at_other_points_of_a_branching_function():
    rng = np.random.default_rng(6)
    f = lambda x: cr.where(x > 0.5, cr.sin(x) * cr.roll(x, 1), cr.maximum(x, x[::-1]))
    p = _pattern(f, rng.random(7))
    for _ in range(5):
        assert not (_nonzeros(f, rng.random(7)) & ~p).any()


def test_hessian_sparsity_of_the_chained_rosenbrock_function_is_tridiagonal():
    f = lambda x: cr.sum(100 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)
    p = cr.hessian_sparsity(f)(np.random.default_rng(7).random(6)).toarray()
    band = np.abs(np.subtract.outer(np.arange(6), np.arange(6))) <= 1
    assert (p == band).all()


def test_hessian_sparsity_holds_the_dense_hessians_non_zeros_and_is_symmetric():
    rng = np.random.default_rng(8)
    f = lambda x: cr.sum(cr.tanh(x[1:] * x[:-1])) + cr.sum(cr.maximum(x, 0.3) ** 3) + x[0] * x[-1]
    p = cr.hessian_sparsity(f)(rng.random(6)).toarray()
    assert (p == p.T).all()
    for _ in range(3):
        assert not ((np.asarray(cr.hessian(f)(rng.random(6))) != 0) & ~p).any()
    assert not p[1, 4]


def test_a_function_of_several_outputs_is_refused_with_its_name():
    with pytest.raises(TypeError, match="jacobian_sparsity: f must return one array"):
        cr.jacobian_sparsity(lambda x: (x, x))(np.ones(2))


def test_without_scipy_the_error_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "scipy", None)
    monkeypatch.setitem(sys.modules, "scipy.sparse", None)
    with pytest.raises(ImportError, match=r"chainrule\[scipy\]"):
        cr.jacobian_sparsity(lambda x: x)(np.ones(2))


@pytest.mark.slow
def test_detection_on_a_million_entries_takes_seconds():
    def residual(u):
        inner = u[:-2] - 2 * u[1:-1] + u[2:] + u[1:-1] ** 2 - cr.exp(u[1:-1])
        return cr.concatenate([u[:1], inner, u[-1:]])
    x = np.random.default_rng(9).random(10 ** 6)
    start = time.perf_counter()
    p = cr.jacobian_sparsity(residual)(x)
    assert time.perf_counter() - start < 20
    assert p.nnz == 3 * (10 ** 6 - 2) + 2


def test_a_rule_that_fails_gives_way_to_the_dense_rule(monkeypatch):
    from chainrule import rules as ops
    from chainrule.sparse import index_sets

    def broken(call):
        raise IndexError("a call this rule did not foresee")
    monkeypatch.setitem(index_sets._FAMILIES, ops.transpose, broken)
    before = pattern_module.dense_fallbacks["transpose (its rule failed)"]
    p = _pattern(lambda x: x[:4].reshape(2, 2).T * x[4], np.ones(6))
    assert p[:, :5].all() and not p[:, 5].any()
    assert pattern_module.dense_fallbacks["transpose (its rule failed)"] == before + 1


def test_a_users_primitive_without_a_batching_kind_takes_the_dense_rule():
    @cr.primitive
    def shifted(x):
        return np.roll(x, 1)
    shifted.defjvp(lambda t, ans, x: np.roll(t, 1))
    p = _pattern(lambda x: shifted(x[:3]) * x[3], np.ones(5))
    assert p[:, :4].all() and not p[:, 4].any()


def test_a_point_that_is_not_numbers_is_refused_and_integers_become_floats():
    with pytest.raises(TypeError, match="jacobian_sparsity: expected an array of numbers"):
        cr.jacobian_sparsity(lambda x: x)(np.array(["a", "b"]))
    assert cr.jacobian_sparsity(lambda x: x * 2)(np.arange(3)).nnz == 3
