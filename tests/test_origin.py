"""NumPy's warnings name the user's line, not the rule inside chainrule that called NumPy.

Run in a fresh interpreter: pytest records warnings itself (it swaps Python's hook for
the length of each test), and the "once per line" registries must start empty.
"""

import subprocess
import sys
import textwrap


def run(script, tmp_path):
    path = tmp_path / "user_program.py"
    path.write_text(textwrap.dedent(script))
    done = subprocess.run([sys.executable, "-W", "default", str(path)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return path, [line for line in done.stderr.splitlines() if "Warning" in line]


def test_runtime_warnings_point_at_the_users_line_once_per_line_as_numpy_does(tmp_path):
    path, warnings = run("""\
        import numpy as np
        import chainrule as cr
        x = cr.tensor([-1.0, 0.0], requires_grad=True)
        y = cr.log(x)
        for _ in range(3):
            z = cr.log(x)
        w = np.log(cr.tensor([0.0]))
        with cr.no_grad():
            v = x.exp() * 1e308 * 10
        g = cr.grad(lambda t: cr.sum(cr.sqrt(t)))(np.array([0.0, 1.0]))
        """, tmp_path)
    assert warnings == [
        f"{path}:4: RuntimeWarning: divide by zero encountered in log",
        f"{path}:4: RuntimeWarning: invalid value encountered in log",
        f"{path}:6: RuntimeWarning: divide by zero encountered in log",
        f"{path}:6: RuntimeWarning: invalid value encountered in log",
        f"{path}:7: RuntimeWarning: divide by zero encountered in log",
        f"{path}:9: RuntimeWarning: overflow encountered in multiply",
        f"{path}:10: RuntimeWarning: divide by zero encountered in divide",
    ]


def test_other_warnings_and_an_earlier_hook_are_left_alone(tmp_path):
    path, warnings = run("""\
        import warnings
        import numpy as np
        seen = []
        warnings.showwarning = lambda message, category, *rest: seen.append(category)
        import chainrule as cr
        np.log(np.array([0.0]))                       # NumPy's own line: not moved
        warnings.warn("a user's own warning")
        cr.log(cr.tensor([0.0]))                      # moved, then shown by that hook
        assert seen == [RuntimeWarning, UserWarning, RuntimeWarning], seen
        """, tmp_path)
    assert warnings == []


def test_a_program_given_with_python_c_is_pointed_at_too():
    """No source file to show the line from (``python -c``): the warning still names it."""
    done = subprocess.run([sys.executable, "-W", "default", "-c",
                           "import chainrule as cr\ncr.log(cr.tensor([-1.0]))"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stderr.strip() == "<string>:2: RuntimeWarning: invalid value encountered in log"


def test_a_warning_recorded_by_catch_warnings_points_at_the_users_line_too():
    """catch_warnings(record=True), as pytest uses, records the user's line, not ours."""
    import warnings
    import chainrule as cr
    x = cr.tensor([-1.0, 1.0])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        cr.log(x); line = sys._getframe().f_lineno  # noqa: E702
    assert [(w.filename, w.lineno) for w in caught] == [(__file__, line)]
