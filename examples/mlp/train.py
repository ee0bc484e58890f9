#!/usr/bin/python3
"""hipr MLP demo: train a two-layer MLP on a remote GPU from unchanged Python.

An ordinary ctypes program (nothing hipr-specific in it). It loads libhipr_mlp.so (built by hipcc from
mlp_kernels.hip), trains a 2-layer MLP with mini-batch SGD on a synthetic, seeded classification set,
and checks every epoch against a NumPy float32 reference of the same computation (same init, same
batches in the same order). Run it through the hipr stub against a worker:

    HIPR_SERVER=127.0.0.1:18515 LD_PRELOAD=build/lib/libhip_client_stub.so \\
        /usr/bin/python3 examples/mlp/train.py --lib build/examples/libhipr_mlp.so

The library comes from --lib, else $HIPR_MLP_LIB, else libhipr_mlp.so next to this script or in
build/examples/ of the repository ($HIPR_BUILD_DIR/examples/ when set). --reference-only runs the
NumPy reference alone (no library, no GPU). Exits 0 after "train.py: OK: ..."; 1 with
"train.py: FAILED: ..." when a HIP call fails or a check does not hold; 2 on bad usage.

Needs Debian's python3-numpy: run it with /usr/bin/python3.
"""
import argparse
import ctypes
import os
import sys
import time

import numpy as np

# The problem: 4 classes, each a mixture of 2 Gaussian blobs in 8 dimensions (so not linearly
# separable in general), 1024 samples; an 8-64-4 MLP; 8 mini-batches of 128 per epoch.
FEATURES = 8
CLASSES = 4
HIDDEN = 64
SAMPLES = 1024
BATCH = 128
EPOCHS = 8
LEARNING_RATE = 0.1
SEED = 2024

LOSS_RTOL = 1e-3      # device loss vs NumPy loss, relative
PARAM_ATOL = 1e-3     # final parameters, absolute after scaling by max(1, max |p|)
MIN_ACCURACY = 0.8    # final accuracy on the whole set must exceed this (chance: 1 / CLASSES)

LAUNCHES_PER_STEP = 13   # 5 forward + 7 backward + 1 SGD update (see Device.train_step)
LAUNCHES_PER_EVAL = 5    # the forward pass


class CheckFailed(Exception):
    pass


def fail(message):
    raise CheckFailed(message)


# ----------------------------------------------------------------------------------------------
# The problem, the initial parameters and the batch order: shared by both paths.
# ----------------------------------------------------------------------------------------------

class Problem:
    def __init__(self, seed, epochs, lr):
        self.lr = lr
        rng = np.random.default_rng(seed)
        centers = rng.normal(0.0, 1.6, size=(2 * CLASSES, FEATURES))
        y = np.arange(SAMPLES) % CLASSES
        blob = y + CLASSES * rng.integers(0, 2, size=SAMPLES)
        x = centers[blob] + rng.normal(0.0, 1.0, size=(SAMPLES, FEATURES))
        self.x = np.ascontiguousarray(x, dtype=np.float32)
        self.y = np.ascontiguousarray(y, dtype=np.int32)

        # He-style init; all parameters in one flat float32 buffer: W1 | b1 | W2 | b2.
        w1 = rng.normal(0.0, np.sqrt(2.0 / FEATURES), size=(FEATURES, HIDDEN))
        w2 = rng.normal(0.0, np.sqrt(1.0 / HIDDEN), size=(HIDDEN, CLASSES))
        self.shapes = [("W1", (FEATURES, HIDDEN)), ("b1", (HIDDEN,)),
                       ("W2", (HIDDEN, CLASSES)), ("b2", (CLASSES,))]
        self.offsets = {}
        offset = 0
        for name, shape in self.shapes:
            self.offsets[name] = offset
            offset += int(np.prod(shape))
        self.param_count = offset
        params = np.zeros(self.param_count, dtype=np.float32)
        params[self.offsets["W1"]:self.offsets["b1"]] = w1.ravel()
        params[self.offsets["W2"]:self.offsets["b2"]] = w2.ravel()
        self.initial_params = params

        # One permutation per epoch; batch b of epoch e is rows [b*BATCH, (b+1)*BATCH) of it.
        self.orders = [rng.permutation(SAMPLES) for _ in range(epochs)]
        self.epochs = epochs

    def views(self, flat):
        """name -> view of the flat parameter (or gradient) array."""
        return {name: flat[self.offsets[name]:self.offsets[name] + int(np.prod(shape))].reshape(shape)
                for name, shape in self.shapes}


# ----------------------------------------------------------------------------------------------
# NumPy reference: the same float32 computation, op by op.
# ----------------------------------------------------------------------------------------------

class Reference:
    def __init__(self, problem):
        self.p = problem
        self.params = problem.initial_params.copy()

    def _forward(self, x, y):
        w = self.p.views(self.params)
        a1 = np.maximum(x @ w["W1"] + w["b1"], np.float32(0))
        logits = a1 @ w["W2"] + w["b2"]
        zmax = logits.max(axis=1, keepdims=True)
        e = np.exp(logits - zmax)
        s = e.sum(axis=1, keepdims=True)
        probs = e * (np.float32(1) / s)
        loss = np.log(s[:, 0]) - (logits[np.arange(len(y)), y] - zmax[:, 0])
        correct = int(np.count_nonzero(logits.argmax(axis=1) == y))
        return a1, probs, loss, correct

    def evaluate(self):
        _, _, loss, correct = self._forward(self.p.x, self.p.y)
        return float(loss.sum(dtype=np.float64)) / SAMPLES, correct / SAMPLES

    def train_epoch(self, epoch, lr):
        order = self.p.orders[epoch]
        x_all, y_all = self.p.x[order], self.p.y[order]
        loss_sum, correct_sum = 0.0, 0
        for start in range(0, SAMPLES, BATCH):
            x, y = x_all[start:start + BATCH], y_all[start:start + BATCH]
            rows = len(y)
            a1, probs, loss, correct = self._forward(x, y)
            loss_sum += float(loss.sum(dtype=np.float64))
            correct_sum += correct
            w = self.p.views(self.params)
            grads = np.zeros_like(self.params)
            g = self.p.views(grads)
            dlogits = probs.copy()
            dlogits[np.arange(rows), y] -= np.float32(1)
            dlogits /= np.float32(rows)
            g["W2"][...] = a1.T @ dlogits
            g["b2"][...] = dlogits.sum(axis=0)
            da1 = dlogits @ w["W2"].T
            dz1 = np.where(a1 > 0, da1, np.float32(0))
            g["W1"][...] = x.T @ dz1
            g["b1"][...] = dz1.sum(axis=0)
            self.params -= np.float32(lr) * grads
        return loss_sum / SAMPLES, correct_sum / SAMPLES


# ----------------------------------------------------------------------------------------------
# The device path: libhipr_mlp.so through ctypes.
# ----------------------------------------------------------------------------------------------

class DeviceError(Exception):
    pass


def find_library(cli_path):
    if cli_path:
        return cli_path
    if os.environ.get("HIPR_MLP_LIB"):
        return os.environ["HIPR_MLP_LIB"]
    here = os.path.dirname(os.path.abspath(__file__))
    build = os.environ.get("HIPR_BUILD_DIR") or os.path.join(here, "..", "..", "build")
    candidates = [os.path.join(here, "libhipr_mlp.so"),
                  os.path.join(build, "examples", "libhipr_mlp.so")]
    for path in candidates:
        if os.path.exists(path):
            return os.path.normpath(path)
    sys.stderr.write(
        "train.py: cannot find libhipr_mlp.so (looked at %s).\n"
        "  Pass --lib PATH or set HIPR_MLP_LIB, after building it with\n"
        "  hipcc --offload-arch=gfx90a -O2 -std=c++17 -shared -fPIC -o libhipr_mlp.so "
        "examples/mlp/mlp_kernels.hip\n" % ", ".join(os.path.normpath(c) for c in candidates))
    sys.exit(2)


class Library:
    """The C API of mlp_kernels.hip; every call raises DeviceError unless it returns hipSuccess."""

    P = ctypes.c_void_p
    I = ctypes.c_int
    SIGNATURES = {
        "mlp_create": [I, ctypes.POINTER(ctypes.c_void_p)],
        "mlp_destroy": [P],
        "mlp_device_name": [P, ctypes.c_char_p, I],
        "mlp_synchronize": [P],
        "mlp_alloc": [P, ctypes.POINTER(ctypes.c_void_p), ctypes.c_size_t],
        "mlp_free": [P, P],
        "mlp_upload": [P, P, P, ctypes.c_size_t],
        "mlp_download": [P, P, P, ctypes.c_size_t],
        "mlp_zero": [P, P, ctypes.c_size_t],
        "mlp_matmul": [P, P, P, P, I, I, I, I, I],
        "mlp_bias_act": [P, P, P, P, I, I, I],
        "mlp_softmax_xent": [P, P, P, P, P, P, I, I],
        "mlp_softmax_xent_grad": [P, P, P, P, I, I],
        "mlp_relu_backward": [P, P, P, P, I],
        "mlp_column_sum": [P, P, P, I, I],
        "mlp_sgd_update": [P, P, P, ctypes.c_float, I],
    }
    LAUNCHES = {"mlp_matmul", "mlp_bias_act", "mlp_softmax_xent", "mlp_softmax_xent_grad",
                "mlp_relu_backward", "mlp_column_sum", "mlp_sgd_update"}

    def __init__(self, path):
        try:
            self.lib = ctypes.CDLL(path)
        except OSError as e:
            raise DeviceError("cannot load %s: %s" % (path, e))
        self.lib.mlp_error_string.restype = ctypes.c_char_p
        self.lib.mlp_error_string.argtypes = [ctypes.c_int]
        self.launches = 0
        for name, argtypes in self.SIGNATURES.items():
            fn = getattr(self.lib, name)
            fn.restype = ctypes.c_int
            fn.argtypes = argtypes
            setattr(self, name[len("mlp_"):], self._checked(name, fn))

    def _checked(self, name, fn):
        def call(*args):
            err = fn(*args)
            if err != 0:
                text = self.lib.mlp_error_string(err)
                raise DeviceError("%s returned HIP error %d (%s)" % (
                    name, err, text.decode(errors="replace") if text else "?"))
            if name in self.LAUNCHES:
                self.launches += 1
        return call


class Device:
    """The model on the device: one flat parameter buffer, one flat gradient buffer, activations."""

    def __init__(self, lib):
        self.lib = lib
        self.ctx = ctypes.c_void_p()
        self.buffers = []
        self.downloads = 0  # Device results read back: what the host observes.

    def setup(self, problem):
        lib = self.lib
        self.p = problem
        lib.create(0, ctypes.byref(self.ctx))
        name = ctypes.create_string_buffer(256)
        lib.device_name(self.ctx, name, len(name))
        self.name = name.value.decode(errors="replace")
        f, i = 4, 4  # sizeof(float), sizeof(int32)
        n = SAMPLES
        self.x_all = self._alloc(n * FEATURES * f)     # the set in its original order (evaluation)
        self.y_all = self._alloc(n * i)
        self.x_epoch = self._alloc(n * FEATURES * f)   # the set in this epoch's order (training)
        self.y_epoch = self._alloc(n * i)
        self.params = self._alloc(problem.param_count * f)
        self.grads = self._alloc(problem.param_count * f)
        self.hidden = self._alloc(n * HIDDEN * f)      # Z1, then A1 = relu(Z1 + b1) in place
        self.logits = self._alloc(n * CLASSES * f)
        self.probs = self._alloc(n * CLASSES * f)
        self.loss = self._alloc(n * f)
        self.stats = self._alloc(4 * f)                # [train loss sum, train correct, eval ..]
        self.dlogits = self._alloc(BATCH * CLASSES * f)
        self.dhidden = self._alloc(BATCH * HIDDEN * f)
        self._upload(self.x_all, problem.x)
        self._upload(self.y_all, problem.y)
        self._upload(self.params, problem.initial_params)
        self.param = {name: self.params + 4 * off for name, off in problem.offsets.items()}
        self.grad = {name: self.grads + 4 * off for name, off in problem.offsets.items()}
        self.train_stats, self.eval_stats = self.stats, self.stats + 2 * f

    def _alloc(self, nbytes):
        ptr = ctypes.c_void_p()
        self.lib.alloc(self.ctx, ctypes.byref(ptr), nbytes)
        self.buffers.append(ptr.value)
        return ptr.value

    def _upload(self, dst, array):
        array = np.ascontiguousarray(array)
        self.lib.upload(self.ctx, dst, array.ctypes.data, array.nbytes)

    def _download(self, src, count, dtype=np.float32):
        self.downloads += 1  # Each is a result the host observes.
        out = np.empty(count, dtype=dtype)
        self.lib.download(self.ctx, out.ctypes.data, src, out.nbytes)
        return out

    def close(self):
        """Best effort (also after a failure): frees the buffers and the context, raises nothing."""
        raw = self.lib.lib
        if self.ctx:
            for ptr in self.buffers:
                raw.mlp_free(self.ctx, ptr)
            raw.mlp_destroy(self.ctx)
        self.buffers = []
        self.ctx = ctypes.c_void_p()

    def _forward(self, x, y, rows, stats):
        L, P = self.lib, self.param
        L.matmul(self.ctx, x, P["W1"], self.hidden, rows, HIDDEN, FEATURES, 0, 0)
        L.bias_act(self.ctx, self.hidden, P["b1"], self.hidden, rows, HIDDEN, 1)
        L.matmul(self.ctx, self.hidden, P["W2"], self.logits, rows, CLASSES, HIDDEN, 0, 0)
        L.bias_act(self.ctx, self.logits, P["b2"], self.logits, rows, CLASSES, 0)
        L.softmax_xent(self.ctx, self.logits, y, self.probs, self.loss, stats, rows, CLASSES)

    def train_step(self, x, y, rows, lr):
        L, P, G = self.lib, self.param, self.grad
        self._forward(x, y, rows, self.train_stats)
        L.softmax_xent_grad(self.ctx, self.probs, y, self.dlogits, rows, CLASSES)
        # dW2 = A1^T dlogits, db2 = column sums of dlogits
        L.matmul(self.ctx, self.hidden, self.dlogits, G["W2"], HIDDEN, CLASSES, rows, 1, 0)
        L.column_sum(self.ctx, self.dlogits, G["b2"], rows, CLASSES)
        # dA1 = dlogits W2^T, dZ1 = dA1 where A1 > 0
        L.matmul(self.ctx, self.dlogits, P["W2"], self.dhidden, rows, HIDDEN, CLASSES, 0, 1)
        L.relu_backward(self.ctx, self.dhidden, self.hidden, self.dhidden, rows * HIDDEN)
        # dW1 = X^T dZ1, db1 = column sums of dZ1
        L.matmul(self.ctx, x, self.dhidden, G["W1"], FEATURES, HIDDEN, rows, 1, 0)
        L.column_sum(self.ctx, self.dhidden, G["b1"], rows, HIDDEN)
        # All parameters live in one buffer: one update launch.
        L.sgd_update(self.ctx, self.params, self.grads, lr, self.p.param_count)

    def evaluate(self):
        self.lib.zero(self.ctx, self.eval_stats, 8)
        self._forward(self.x_all, self.y_all, SAMPLES, self.eval_stats)
        loss_sum, correct = self._download(self.eval_stats, 2)
        return float(loss_sum) / SAMPLES, float(correct) / SAMPLES

    def train_epoch(self, epoch, lr):
        order = self.p.orders[epoch]
        self._upload(self.x_epoch, self.p.x[order])
        self._upload(self.y_epoch, self.p.y[order])
        self.lib.zero(self.ctx, self.train_stats, 8)
        for start in range(0, SAMPLES, BATCH):
            rows = min(BATCH, SAMPLES - start)
            self.train_step(self.x_epoch + 4 * FEATURES * start, self.y_epoch + 4 * start, rows, lr)
        loss_sum, correct = self._download(self.train_stats, 2)
        return float(loss_sum) / SAMPLES, float(correct) / SAMPLES

    def parameters(self):
        return self._download(self.params, self.p.param_count)


# ----------------------------------------------------------------------------------------------

def expected_launches(epochs):
    """An evaluation of the whole set before and after training, plus the training steps."""
    steps = epochs * ((SAMPLES + BATCH - 1) // BATCH)
    return 2 * LAUNCHES_PER_EVAL + LAUNCHES_PER_STEP * steps


def close_enough(a, b, rtol=LOSS_RTOL):
    return abs(a - b) <= rtol * max(abs(a), abs(b), 1e-6)


def check_training(initial_loss, final_loss, final_accuracy):
    chance = 1.0 / CLASSES
    if not np.isfinite(final_loss) or final_loss >= initial_loss:
        fail("the loss did not fall: %.4f -> %.4f" % (initial_loss, final_loss))
    if final_accuracy <= MIN_ACCURACY:
        fail("final accuracy %.3f is not above %.2f (chance %.2f)" % (final_accuracy, MIN_ACCURACY,
                                                                     chance))


def describe(problem):
    return ("%d samples, %d features, %d classes, MLP %d-%d-%d, %d epochs of %d batches of %d, lr %g"
            % (SAMPLES, FEATURES, CLASSES, FEATURES, HIDDEN, CLASSES, problem.epochs,
               SAMPLES // BATCH, BATCH, problem.lr))


def run_reference_only(problem):
    ref = Reference(problem)
    print("NumPy reference only: " + describe(problem))
    initial_loss, initial_acc = ref.evaluate()
    print("before training  whole-set loss %.4f  accuracy %.3f" % (initial_loss, initial_acc))
    for epoch in range(problem.epochs):
        train_loss, train_acc = ref.train_epoch(epoch, problem.lr)
        print("epoch %2d/%-2d      train loss %.4f  accuracy %.3f"
              % (epoch + 1, problem.epochs, train_loss, train_acc))
    loss, acc = ref.evaluate()
    print("after training   whole-set loss %.4f  accuracy %.3f" % (loss, acc))
    check_training(initial_loss, loss, acc)
    print("train.py: OK (reference only): loss %.2f -> %.2f, accuracy %.2f (chance %.2f)"
          % (initial_loss, loss, acc, 1.0 / CLASSES))


def run_device(problem, lib_path):
    lib = Library(lib_path)
    dev = Device(lib)
    try:
        dev.setup(problem)
        ref = Reference(problem)
        print("device: %s; library %s" % (dev.name, lib_path))
        print(describe(problem) + "; NumPy reference alongside")
        began = time.monotonic()
        initial_loss, initial_acc = dev.evaluate()
        ref_loss, ref_acc = ref.evaluate()
        print("before training  whole-set loss %.4f  accuracy %.3f   (NumPy %.4f %.3f)"
              % (initial_loss, initial_acc, ref_loss, ref_acc))
        compare("before training", initial_loss, initial_acc, ref_loss, ref_acc)
        for epoch in range(problem.epochs):
            train_loss, train_acc = dev.train_epoch(epoch, problem.lr)
            ref_train_loss, ref_train_acc = ref.train_epoch(epoch, problem.lr)
            print("epoch %2d/%-2d      train loss %.4f  accuracy %.3f   (NumPy %.4f %.3f)"
                  % (epoch + 1, problem.epochs, train_loss, train_acc, ref_train_loss,
                     ref_train_acc))
            compare("epoch %d" % (epoch + 1), train_loss, train_acc, ref_train_loss, ref_train_acc)
        loss, acc = dev.evaluate()
        ref_loss, ref_acc = ref.evaluate()
        print("after training   whole-set loss %.4f  accuracy %.3f   (NumPy %.4f %.3f)"
              % (loss, acc, ref_loss, ref_acc))
        compare("after training", loss, acc, ref_loss, ref_acc)
        params = dev.parameters()
        took = time.monotonic() - began
        scale = max(1.0, float(np.abs(ref.params).max()))
        worst = float(np.abs(params - ref.params).max())
        if not worst <= PARAM_ATOL * scale:
            fail("final parameters differ from NumPy's by up to %.3g (allowed %.3g)"
                 % (worst, PARAM_ATOL * scale))
        check_training(initial_loss, loss, acc)
        print("%d kernel launches (expected %d) in %.1f s; final parameters within %.1e of NumPy's"
              % (lib.launches, expected_launches(problem.epochs), took, worst))
        print("host observations: %d (device results read back)" % dev.downloads)
        print("train.py: OK: loss %.2f -> %.2f, accuracy %.2f (chance %.2f), matches NumPy"
              % (initial_loss, loss, acc, 1.0 / CLASSES))
    finally:
        dev.close()


def compare(what, loss, acc, ref_loss, ref_acc):
    if not close_enough(loss, ref_loss):
        fail("%s: device loss %.6f differs from NumPy's %.6f by more than rel %.0e"
             % (what, loss, ref_loss, LOSS_RTOL))
    # Accuracy counts argmaxes: allow one sample to flip on a near tie.
    if abs(acc - ref_acc) > 1.5 / SAMPLES:
        fail("%s: device accuracy %.4f differs from NumPy's %.4f" % (what, acc, ref_acc))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--lib", help="path of libhipr_mlp.so (default: $HIPR_MLP_LIB, then "
                                      "next to this script, then build/examples/)")
    parser.add_argument("--reference-only", action="store_true",
                        help="run the NumPy reference alone (no library, no GPU)")
    parser.add_argument("--epochs", type=int, default=EPOCHS)
    parser.add_argument("--lr", type=float, default=LEARNING_RATE)
    parser.add_argument("--seed", type=int, default=SEED)
    args = parser.parse_args()
    if args.epochs < 1:
        parser.error("--epochs must be at least 1")
    problem = Problem(args.seed, args.epochs, args.lr)
    try:
        if args.reference_only:
            run_reference_only(problem)
        else:
            run_device(problem, find_library(args.lib))
    except (CheckFailed, DeviceError) as e:
        sys.stdout.flush()
        sys.stderr.write("train.py: FAILED: %s\n" % e)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
