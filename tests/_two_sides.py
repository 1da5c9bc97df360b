"""Running one program on gradkit.tf and, where it is installed, on TensorFlow."""

import gradkit.tf as gtf


def both(program, tmp_path):
    """``program(tf, path)`` on gradkit, and on TensorFlow where it is installed (else None)."""
    got = program(gtf, tmp_path / "gk")
    try:
        import tensorflow as rtf
    except ImportError:
        return got, None
    return got, program(rtf, tmp_path / "tf")
