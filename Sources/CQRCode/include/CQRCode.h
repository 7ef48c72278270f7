// CQRCode: reading QR codes from PNG and JPEG images, and making them, through libraries loaded
// with dlopen at run time (like CLibSecret): zbar (libzbar.so.0) finds and decodes QR codes in
// grayscale pixels; libpng (libpng16.so.16) and TurboJPEG (libturbojpeg.so.0) turn image files
// into those pixels; libqrencode (libqrencode.so.4) makes codes. Building needs none of their
// headers; a missing library makes its load function name the package to install.
#ifndef COFFER_CQRCODE_H
#define COFFER_CQRCODE_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/// The libraries, loaded on first use. Each returns NULL when it is there, or a static message
/// naming what to install. Safe from any thread, any number of times.
const char *coffer_qr_load_zbar(void);
const char *coffer_qr_load_png(void);
const char *coffer_qr_load_jpeg(void);
const char *coffer_qr_load_qrencode(void);

/// Decodes a PNG (or JPEG) file's bytes into 8-bit grayscale, one byte per pixel, rows packed.
/// Refuses images of more than `max_pixels`. Returns 0 and sets *pixels (free with
/// coffer_qr_free), *width and *height; otherwise returns 1 with a message in `error`.
int coffer_qr_decode_png(const unsigned char *data, size_t length, size_t max_pixels,
                         unsigned char **pixels, unsigned *width, unsigned *height, char *error, size_t error_size);
int coffer_qr_decode_jpeg(const unsigned char *data, size_t length, size_t max_pixels,
                          unsigned char **pixels, unsigned *width, unsigned *height, char *error, size_t error_size);

/// The QR codes zbar finds in grayscale pixels: `count` texts of `lengths` bytes each.
typedef struct {
    size_t count;
    char **texts;
    size_t *lengths;
} coffer_qr_symbols;

/// Scans for QR codes. Returns 0 and fills `symbols` (free with coffer_qr_symbols_free), or 1.
int coffer_qr_scan(const unsigned char *pixels, unsigned width, unsigned height, coffer_qr_symbols *symbols);
void coffer_qr_symbols_free(coffer_qr_symbols *symbols);

/// Encodes `text` (8-bit mode, error correction M) as `*width` × `*width` modules, one byte each,
/// 1 for dark. Returns 0 and sets *modules (free with coffer_qr_free), or 1 (too long, no memory).
int coffer_qr_encode(const char *text, unsigned char **modules, unsigned *width);

void coffer_qr_free(void *pointer);

#ifdef __cplusplus
}
#endif

#endif
