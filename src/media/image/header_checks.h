// Structural checks run before stb_image sees the bytes, refusing inputs that Debian's
// stb_image 2.27 mishandles (memory errors, undefined behaviour, unbounded work). The
// reference's 2.30 refuses most of them too; where it decodes them (see each), it is a
// corrupt file either way. Internal.
#pragma once

#include <cstdint>
#include <span>

#include "base/status.h"

namespace hearth::media {

// Walks a JPEG's marker segments as stb_image reads them (between scans too: progressive
// files define tables after their first scan) and refuses, with the reason:
// - a Huffman table declaring more than 256 codes: stb_image 2.27 writes past its 257-entry
//   code-length array (found by image_fuzz). 2.28 added the refusal "bad size list": the
//   reference refuses the file when the table comes before the first scan, and after it
//   stops there and returns what it has (for a progressive file, pixels it never computed);
// - a scan using a Huffman table, or a frame component using a quantization table, that no
//   segment defined: 2.27 reads its uninitialised table (found by image_fuzz: an index far out
//   of bounds; otherwise leftover heap bytes become pixels). 2.30 zeroes its state first and
//   decodes such a file to grey; libjpeg refuses it, as Hearth does;
// - more than kMaxJpegScans scans: each progressive scan walks every block of the image, so a
//   small file of many empty scans over a large frame costs minutes of CPU (real files have
//   about ten; libjpeg's tools stop at 1000 too).
// Anything that is not a JPEG, or ends early, passes: stb_image judges it.
inline constexpr int kMaxJpegScans = 1000;
Status check_jpeg_structure(std::span<const uint8_t> bytes);

// Refuses, in a binary PNM (P5/P6), what stb_image 2.27 mishandles (all found by image_fuzz):
// - a header integer over INT_MAX, which overflows a signed int (2.30: "integer parse
//   overflow");
// - fewer sample bytes than the header declares: 2.27 ignores the short read and returns the
//   rest of its buffer uninitialised, leftover heap bytes as pixels (2.30: "bad PNM");
// - 16-bit greyscale (P5 with a maximum value over 255): 2.27 converts its samples as 8-bit
//   and then reads twice the buffer's size (a heap overflow). 2.30 decodes it; Hearth refuses
//   it as unsupported, a deliberate difference for a format nobody uploads.
// Anything else passes.
Status check_pnm_header(std::span<const uint8_t> bytes);

// Refuses a PNG whose compressed image data inflates to more than twice what its header's
// size needs. stb_image (both versions) inflates the whole stream into memory, growing its
// buffer as it goes, so a 400 KB file declaring 1 x 1 pixels can take 400 MB: a decompression
// bomb that the header's size does not reveal. Inflates in constant memory to count. Also
// refuses an IDAT chunk longer than the rest of the file, for which stb_image allocates the
// declared length (found by image_fuzz: 2 GB) before failing. Anything that is not a PNG, or
// whose data is otherwise corrupt, passes for stb_image to judge.
Status check_png_inflated_size(std::span<const uint8_t> bytes);

}  // namespace hearth::media
