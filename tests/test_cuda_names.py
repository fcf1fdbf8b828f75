"""cr.cuda answers torch.cuda's questions as torch does on a machine without a GPU, so a
program that asks (makemore.py seeds CUDA at every start, and picks its device by
is_available) runs with only the import changed."""

import pytest

import chainrule as cr


def test_there_is_no_cuda_device_and_seeding_one_does_nothing():
    import chainrule.cuda
    assert chainrule.cuda is cr.cuda
    assert cr.cuda.is_available() is False and cr.cuda.device_count() == 0
    cr.manual_seed(7)
    first = cr.rand(3)
    cr.manual_seed(7)
    assert cr.cuda.manual_seed_all(123) is None and cr.cuda.manual_seed(5) is None
    assert (cr.rand(3).data == first.data).all()  # the CPU generator is left alone
    device = "cuda" if cr.cuda.is_available() else "cpu"
    assert cr.zeros(2, device=device).shape == (2,)


def test_a_seed_that_is_not_a_number_is_refused():
    with pytest.raises((TypeError, ValueError)):
        cr.cuda.manual_seed_all("abc")


def test_torch_says_the_same_without_a_gpu():
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        pytest.skip("this machine has a GPU")
    assert (cr.cuda.is_available(), cr.cuda.device_count()) == (
        torch.cuda.is_available(), torch.cuda.device_count())
