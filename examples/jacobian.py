"""The Jacobian of a small vector function, two ways.

    f(x) = [ x1 + 4 x2,  10 x2^2 + sin x3 ]        for x = [x1, x2, x3]

has two outputs and three inputs, so its Jacobian is the 2 x 3 matrix of partial
derivatives d f_i / d x_j, which we can also write down by hand:

    J(x) = [[ 1,  4,       0      ],
            [ 0,  20 x2,   cos x3 ]]

chainrule computes it by reverse mode (``cr.jacrev``: one backward pass per output row,
done here as a single batched pass) and by forward mode (``cr.jacfwd``: one forward pass
per input column). Both must give the hand-written matrix.

Run it with:  python examples/jacobian.py
"""

import numpy as np

import chainrule as cr


def f(x):
    # Indexing, arithmetic and cr.sin work on plain arrays and on the Tensors the
    # transforms pass in; cr.stack gathers the two outputs into one vector.
    return cr.stack([x[0] + 4 * x[1],
                     10 * x[1] ** 2 + cr.sin(x[2])])


def jacobian_by_hand(x):
    return np.array([[1.0, 4.0, 0.0],
                     [0.0, 20.0 * x[1], np.cos(x[2])]])


def main():
    x = np.array([0.5, -1.5, 0.7])
    reverse = cr.jacrev(f)(x)
    forward = cr.jacfwd(f)(x)
    by_hand = jacobian_by_hand(x)

    with np.printoptions(precision=6, suppress=True):  # only for these prints
        print(f"x     = {x}")
        print(f"f(x)  = {f(x)}")
        print(f"\njacrev (reverse mode):\n{reverse}")
        print(f"\njacfwd (forward mode):\n{forward}")
        print(f"\nby hand [[1, 4, 0], [0, 20 x2, cos x3]]:\n{by_hand}")
    print(f"\nlargest difference from the formula: "
          f"jacrev {np.max(np.abs(reverse - by_hand)):.1e}, "
          f"jacfwd {np.max(np.abs(forward - by_hand)):.1e}")
    return {"x": x, "jacrev": reverse, "jacfwd": forward, "by_hand": by_hand}


if __name__ == "__main__":
    main()
