#!/usr/bin/env python3
"""Writes the .npy/.npz fixtures of tests/test_tensor_io.c with numpy itself, so that the
test checks byocl against what numpy really writes (and byocl's encoder against np.save's
bytes). Run from anywhere: /usr/bin/python3 tests/gen/gen_tensor_io.py
The values here are repeated in tests/test_tensor_io.c; change both together."""
import os
import zipfile

import numpy as np

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures", "tensor_io")

# One array per byocl dtype (shape (2, 3) unless noted).
ARRAYS = {
    "f32": np.array([[0.0, -1.5, 2.25], [3.0e38, -1.0e-30, 7.0]], dtype="<f4"),
    "f16": np.array([[0.0, -1.5, 0.1], [65504.0, -6.0e-8, np.inf]], dtype="<f2"),
    "i32": np.array([[0, -1, 2147483647], [-2147483648, 42, -7]], dtype="<i4"),
    "i64": np.array([9223372036854775807, -9223372036854775808, 0, -1, 5], dtype="<i8"),
    "i8": np.array([[0, -1, 127], [-128, 42, -7]], dtype="|i1"),
    "u8": np.array([[0, 1, 255], [128, 42, 7]], dtype="|u1"),
    "bool": np.array([[True, False, True], [False, False, True]], dtype="|b1"),
    "f64": np.array([[0.0, -1.5, 0.1], [1.0e300, -5.0e-324, -np.inf]], dtype="<f8"),
    "i16": np.array([[0, -1, 32767], [-32768, 42, -7]], dtype="<i2"),
    "u16": np.array([[0, 1, 65535], [32768, 42, 7]], dtype="<u2"),
    "u32": np.array([[0, 1, 4294967295], [2147483648, 42, 7]], dtype="<u4"),
    "u64": np.array([[0, 18446744073709551615, 9223372036854775808],
                     [9007199254740993, 42, 7]], dtype="<u8"),
    "scalar_f32": np.array(3.5, dtype="<f4"),
    "empty_f32": np.zeros((0, 3), dtype="<f4"),
    "rank4_i32": np.arange(2 * 1 * 3 * 2, dtype="<i4").reshape(2, 1, 3, 2) - 5,
}


def path(name):
    return os.path.join(OUT, name)


def main():
    os.makedirs(OUT, exist_ok=True)
    for name, a in ARRAYS.items():
        np.save(path(name + ".npy"), a)

    # Format versions 2.0 and 3.0 (4-byte header length; 3.0 allows utf-8 headers).
    for version in ((2, 0), (3, 0)):
        with open(path("v%d_f32.npy" % version[0]), "wb") as f:
            np.lib.format.write_array(f, ARRAYS["f32"], version=version)

    # np.savez (stored members) and np.savez_compressed (deflated members).
    members = {"w": ARRAYS["f32"], "relay.Constant.0": ARRAYS["i64"], "flag": ARRAYS["bool"]}
    np.savez(path("savez.npz"), **members)
    np.savez_compressed(path("savez_compressed.npz"), **members)

    # Error cases.
    np.save(path("fortran.npy"), np.asfortranarray(ARRAYS["f32"]))
    np.save(path("bigendian.npy"), ARRAYS["f32"].astype(">f4"))
    np.save(path("complex64.npy"), ARRAYS["u8"].astype("<c8"))
    with open(path("f32.npy"), "rb") as f:
        whole = f.read()
    with open(path("truncated.npy"), "wb") as f:
        f.write(whole[:-4])
    with open(path("not_a_zip.npz"), "wb") as f:
        f.write(b"this is not a zip archive\n")
    with zipfile.ZipFile(path("other_member.npz"), "w") as z:
        with z.open("w.npy", "w") as m:
            np.lib.format.write_array(m, ARRAYS["f32"])
        z.writestr("README.txt", "not an array\n")
    np.savez(path("complex64_member.npz"), w=ARRAYS["u8"].astype("<c8"))
    # A stored archive whose member data no longer matches its CRC.
    np.savez(path("bad_crc.npz"), w=ARRAYS["f32"])
    with open(path("bad_crc.npz"), "rb") as f:
        data = bytearray(f.read())
    at = data.index(b"\x00\x00\xc0\xbf")  # -1.5f inside the stored w.npy
    data[at + 3] ^= 0x40
    with open(path("bad_crc.npz"), "wb") as f:
        f.write(bytes(data))


if __name__ == "__main__":
    main()
