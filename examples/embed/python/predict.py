"""Test accuracy of a Sinter checkpoint from Python, through the C API (ctypes, numpy):
python3 predict.py mlp.sinter mlp.safetensors /usr/share/datasets/fashion-mnist"""
import ctypes, gzip, sys
import numpy as np

lib = ctypes.CDLL("libsinter_runtime.so")  # on LD_LIBRARY_PATH, or give its path
lib.sinter_last_error.restype = ctypes.c_char_p
def ok(code):
    if code: sys.exit(f"predict: {lib.sinter_last_error().decode()} (error {code})")
artifact, session, shape = ctypes.c_void_p(), ctypes.c_void_p(), ctypes.POINTER(ctypes.c_int64)()
ok(lib.sinter_artifact_open(sys.argv[1].encode(), ctypes.byref(artifact)))
ok(lib.sinter_session_open(artifact, b"predict", ctypes.byref(session)))
ok(lib.sinter_session_load(session, sys.argv[2].encode()))  # the parameters of a training checkpoint
ok(lib.sinter_session_input(session, 0, None, None, None, ctypes.byref(shape), None))
read = lambda name, skip: np.frombuffer(gzip.open(f"{sys.argv[3]}/t10k-{name}.gz").read()[skip:], np.uint8)
images, labels = read("images-idx3-ubyte", 16).reshape(-1, 784) / np.float32(255), read("labels-idx1-ubyte", 8)
ptr = lambda a: a.ctypes.data_as(ctypes.c_void_p)
batch, logits, correct = shape[0], np.empty((shape[0], 10), np.float32), 0
for first in range(0, len(labels), batch):
    x = np.zeros((batch, 784), np.float32); x[: len(images[first : first + batch])] = images[first : first + batch]
    ok(lib.sinter_session_set_input(session, b"input", ptr(x), ctypes.c_size_t(x.nbytes))); ok(lib.sinter_session_run(session))
    ok(lib.sinter_session_get_output(session, b"logits", ptr(logits), ctypes.c_size_t(logits.nbytes)))
    correct += int((logits.argmax(1)[: len(labels[first : first + batch])] == labels[first : first + batch]).sum())
print(f"test accuracy {100 * correct / len(labels):.2f}% ({len(labels)} images)")
