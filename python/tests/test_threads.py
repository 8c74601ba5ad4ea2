"""Several Python threads run one session at once: run() releases the GIL."""
import json
import threading
import time

import numpy as np

import loom
from conftest import add_relu_model, endless_loop_model


def test_concurrent_runs_give_each_thread_its_results():
    sess = loom.InferenceSession(add_relu_model(), providers=["reference"])
    errors, threads = [], []

    def worker(k):
        try:
            rng = np.random.default_rng(k)
            for _ in range(40):
                n = int(rng.integers(1, 64))
                a = rng.standard_normal((n, 3)).astype(np.float32)
                b = rng.standard_normal((n, 3)).astype(np.float32)
                s, y = sess.run(None, {"a": a, "b": b})
                np.testing.assert_allclose(s, a + b, rtol=1e-6)
                np.testing.assert_allclose(y, np.maximum(a + b, 0), rtol=1e-6)
        except Exception as e:  # noqa: BLE001 -- reported by the main thread
            errors.append(e)

    for k in range(8):
        threads.append(threading.Thread(target=worker, args=(k,)))
        threads[-1].start()
    for t in threads:
        t.join(60)
    assert not errors, errors
    assert not any(t.is_alive() for t in threads)


def test_runs_in_flight_release_the_gil(tmp_path):
    """Two threads run an endless loop on one session; the main thread can
    only stop them (RunOptions.terminate) if neither holds the GIL. Should
    the GIL stay held, the run time limit ends them with TimedOut instead."""
    config = tmp_path / "loom.json"
    config.write_text(json.dumps({"limits": {"run_timeout_ms": 20000}}))
    sess = loom.InferenceSession(endless_loop_model(), providers=["reference"], config=config)
    ro = loom.RunOptions()
    outcomes, started = [], []

    def worker():
        started.append(time.monotonic())
        try:
            sess.run(None, {"x": np.zeros(1, np.float32)}, ro)
            outcomes.append("finished")
        except loom.LoomError as e:
            outcomes.append(e)

    threads = [threading.Thread(target=worker) for _ in range(2)]
    for t in threads:
        t.start()
    time.sleep(0.5)  # both runs are looping now
    stopped_at = time.monotonic()
    ro.terminate = True
    for t in threads:
        t.join(30)
    assert not any(t.is_alive() for t in threads)
    assert len(outcomes) == 2
    for e in outcomes:
        assert isinstance(e, loom.Cancelled), e
    assert time.monotonic() - stopped_at < 10
