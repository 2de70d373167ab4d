#!/usr/bin/env python3
"""Writes the small WAV test clips in this folder (deterministic: fixed seeds, no numpy).

Each clip is a few hundred milliseconds of a sine sweep plus noise, in one of the encodings the
decoder must read; see README.md for what each one exercises.
"""
import math
import random
import struct
import sys
from pathlib import Path

OUT = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).parent


def signal(rate, seconds, channels, seed):
    """Frames of floats in [-0.9, 0.9]: a sweep 200 Hz -> rate/3 per channel plus noise."""
    rng = random.Random(seed)
    n = int(rate * seconds)
    frames = []
    for i in range(n):
        t = i / rate
        frame = []
        for c in range(channels):
            f0, f1 = 200.0 * (c + 1), rate / 3.0
            phase = 2 * math.pi * (f0 * t + (f1 - f0) * t * t / (2 * seconds))
            v = 0.6 * math.sin(phase) + 0.2 * (rng.random() * 2 - 1)
            frame.append(max(-0.9, min(0.9, v)))
        frames.append(frame)
    return frames


def encode(frames, kind):
    out = bytearray()
    for frame in frames:
        for v in frame:
            if kind == 'u8':
                out += struct.pack('<B', int(round(v * 127)) + 128)
            elif kind == 's16':
                out += struct.pack('<h', int(round(v * 32767)))
            elif kind == 's24':
                out += struct.pack('<i', int(round(v * 8388607)))[:3]
            elif kind == 's32':
                out += struct.pack('<i', int(round(v * 2147483647)))
            elif kind == 'f32':
                out += struct.pack('<f', v)
            elif kind == 'f64':
                out += struct.pack('<d', v)
    return bytes(out)


BITS = {'u8': 8, 's16': 16, 's24': 24, 's32': 32, 'f32': 32, 'f64': 64}


def fmt_chunk(kind, channels, rate, extensible=False, mask=0):
    bits = BITS[kind]
    tag = 3 if kind in ('f32', 'f64') else 1
    block = channels * bits // 8
    base = struct.pack('<HHIIHH', 0xFFFE if extensible else tag, channels, rate, rate * block,
                       block, bits)
    if extensible:
        guid_tail = bytes.fromhex('000000001000800000aa00389b71')
        base += struct.pack('<HHI', 22, bits, mask) + struct.pack('<H', tag) + guid_tail
    return b'fmt ' + struct.pack('<I', len(base)) + base


def riff(chunks):
    body = b'WAVE' + b''.join(chunks)
    return b'RIFF' + struct.pack('<I', len(body)) + body


def data_chunk(payload, declared=None):
    size = len(payload) if declared is None else declared
    pad = b'\0' if len(payload) % 2 else b''
    return b'data' + struct.pack('<I', size) + payload + pad


def write(name, blob):
    (OUT / name).write_bytes(blob)


def main():
    clips = [
        # name, kind, channels, rate, seconds
        ('mono_s16_16k.wav', 's16', 1, 16000, 0.30),
        ('stereo_s16_44k.wav', 's16', 2, 44100, 0.25),
        ('mono_u8_8k.wav', 'u8', 1, 8000, 0.40),
        ('mono_s24_22k.wav', 's24', 1, 22050, 0.30),
        ('stereo_s32_48k.wav', 's32', 2, 48000, 0.20),
        ('mono_f32_48k.wav', 'f32', 1, 48000, 0.20),
        ('stereo_f64_16k.wav', 'f64', 2, 16000, 0.25),
    ]
    for seed, (name, kind, channels, rate, seconds) in enumerate(clips):
        pcm = encode(signal(rate, seconds, channels, seed), kind)
        write(name, riff([fmt_chunk(kind, channels, rate), data_chunk(pcm)]))

    # WAVE_FORMAT_EXTENSIBLE, three channels (L, R, C) of 16-bit at 32 kHz, with a LIST chunk
    # of odd size (one pad byte) between fmt and data.
    pcm = encode(signal(32000, 0.2, 3, 11), 's16')
    listc = b'LIST' + struct.pack('<I', 5) + b'INFOx' + b'\0'
    write('ext_3ch_s16_32k.wav',
          riff([fmt_chunk('s16', 3, 32000, extensible=True, mask=0x7), listc, data_chunk(pcm)]))

    # A data chunk that claims more bytes than the file holds (a truncated download): the
    # reference reads what is there.
    pcm = encode(signal(22050, 0.25, 2, 12), 's16')
    write('truncated_s16_22k.wav', riff([fmt_chunk('s16', 2, 22050), data_chunk(pcm, len(pcm) * 3)]))

    # 31 s, so the mel has two 30 s chunks: 8 kHz 8-bit mono from an integer formula that
    # tests/unit/media_audio rebuilds in memory (not written here: 248 KB).
    if len(sys.argv) > 2:
        n = 8000 * 31
        pcm = bytes(((i * i * 7 + i * 13) >> 3) & 0xFF for i in range(n))
        Path(sys.argv[2]).write_bytes(riff([fmt_chunk('u8', 1, 8000), data_chunk(pcm)]))


if __name__ == '__main__':
    main()
