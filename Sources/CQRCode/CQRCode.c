// See include/CQRCode.h. The declarations below mirror the libraries' stable C ABIs: libpng's
// simplified API (png_image, version 1), TurboJPEG's tj* functions, zbar's image scanner and
// libqrencode's QRcode; no headers are needed to build.
#define _GNU_SOURCE
#include "CQRCode.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// MARK: - Loading

static void *open_library(const char *variable, const char *name) {
    // COFFER_LIBZBAR etc. name another file: for unusual installations, and for tests of what
    // happens when a library is missing.
    // Only an absolute path: a bare or relative name would be looked up in the working
    // directory or the search path (the library is then reported missing).
    const char *override = getenv(variable);
    if (override && *override && override[0] != '/') return NULL;
    return dlopen(override && *override ? override : name, RTLD_NOW | RTLD_LOCAL);
}

#define BIND(table, library, field, name, failure)                                    \
    do {                                                                              \
        *(void **)(&table.field) = dlsym(library, name);                              \
        if (table.field == NULL) {                                                    \
            *failure = "a library Coffer loads lacks " name "; install a current version"; \
            return;                                                                   \
        }                                                                             \
    } while (0)

// zbar
static struct {
    void *(*scanner_create)(void);
    int (*scanner_set_config)(void *, int, int, int);
    void (*scanner_destroy)(void *);
    void *(*image_create)(void);
    void (*image_set_format)(void *, unsigned long);
    void (*image_set_size)(void *, unsigned, unsigned);
    void (*image_set_data)(void *, const void *, unsigned long, void *);
    void (*image_destroy)(void *);
    int (*scan_image)(void *, void *);
    const void *(*first_symbol)(const void *);
    const void *(*symbol_next)(const void *);
    const char *(*symbol_get_data)(const void *);
    unsigned (*symbol_get_data_length)(const void *);
} zbar;
static pthread_once_t zbar_once = PTHREAD_ONCE_INIT;
static const char *zbar_failure = NULL;

static void load_zbar(void) {
    void *library = open_library("COFFER_LIBZBAR", "libzbar.so.0");
    if (library == NULL) {
        zbar_failure = "libzbar.so.0 is not installed; install it (Debian/Ubuntu: apt-get install libzbar0)";
        return;
    }
    const char **failure = &zbar_failure;
    BIND(zbar, library, scanner_create, "zbar_image_scanner_create", failure);
    BIND(zbar, library, scanner_set_config, "zbar_image_scanner_set_config", failure);
    BIND(zbar, library, scanner_destroy, "zbar_image_scanner_destroy", failure);
    BIND(zbar, library, image_create, "zbar_image_create", failure);
    BIND(zbar, library, image_set_format, "zbar_image_set_format", failure);
    BIND(zbar, library, image_set_size, "zbar_image_set_size", failure);
    BIND(zbar, library, image_set_data, "zbar_image_set_data", failure);
    BIND(zbar, library, image_destroy, "zbar_image_destroy", failure);
    BIND(zbar, library, scan_image, "zbar_scan_image", failure);
    BIND(zbar, library, first_symbol, "zbar_image_first_symbol", failure);
    BIND(zbar, library, symbol_next, "zbar_symbol_next", failure);
    BIND(zbar, library, symbol_get_data, "zbar_symbol_get_data", failure);
    BIND(zbar, library, symbol_get_data_length, "zbar_symbol_get_data_length", failure);
}

const char *coffer_qr_load_zbar(void) {
    pthread_once(&zbar_once, load_zbar);
    return zbar_failure;
}

// libpng's simplified API.
typedef struct {
    void *opaque;
    uint32_t version, width, height, format, flags, colormap_entries, warning_or_error;
    char message[64];
} png_image_abi;
typedef struct { uint8_t red, green, blue; } png_color_abi;
enum { PNG_IMAGE_VERSION_ABI = 1, PNG_FORMAT_GRAY_ABI = 0 };

static struct {
    int (*begin_read_from_memory)(png_image_abi *, const void *, size_t);
    int (*finish_read)(png_image_abi *, const png_color_abi *, void *, int32_t, void *);
    void (*image_free)(png_image_abi *);
} png;
static pthread_once_t png_once = PTHREAD_ONCE_INIT;
static const char *png_failure = NULL;

static void load_png(void) {
    void *library = open_library("COFFER_LIBPNG", "libpng16.so.16");
    if (library == NULL) {
        png_failure = "libpng16.so.16 is not installed; install it (Debian/Ubuntu: apt-get install libpng16-16)";
        return;
    }
    const char **failure = &png_failure;
    BIND(png, library, begin_read_from_memory, "png_image_begin_read_from_memory", failure);
    BIND(png, library, finish_read, "png_image_finish_read", failure);
    BIND(png, library, image_free, "png_image_free", failure);
}

const char *coffer_qr_load_png(void) {
    pthread_once(&png_once, load_png);
    return png_failure;
}

// TurboJPEG.
enum {
    TJPF_GRAY_ABI = 6,
    // Stop at the first warning (a damaged file), and refuse progressive files with an
    // unreasonable number of scans: each scan is decoded over the whole image, so a small file
    // repeating scans can cost hours.
    TJFLAG_STOPONWARNING_ABI = 8192,
    TJFLAG_LIMITSCANS_ABI = 32768,
};

/// The most pixels a JPEG is decoded to: larger ones are decoded scaled down (1/2, 1/4, 1/8),
/// which TurboJPEG does in the DCT, so each scan costs a fraction. A QR code stays readable.
static const size_t jpeg_decoded_pixels = 4000000;
static struct {
    void *(*init_decompress)(void);
    int (*decompress_header3)(void *, const unsigned char *, unsigned long, int *, int *, int *, int *);
    int (*decompress2)(void *, const unsigned char *, unsigned long, unsigned char *, int, int, int, int, int);
    char *(*error_string)(void *);
    int (*destroy)(void *);
} jpeg;
static pthread_once_t jpeg_once = PTHREAD_ONCE_INIT;
static const char *jpeg_failure = NULL;

static void load_jpeg(void) {
    void *library = open_library("COFFER_LIBTURBOJPEG", "libturbojpeg.so.0");
    if (library == NULL) {
        jpeg_failure = "libturbojpeg.so.0 is not installed; install it (Debian/Ubuntu: apt-get install libturbojpeg0)";
        return;
    }
    const char **failure = &jpeg_failure;
    BIND(jpeg, library, init_decompress, "tjInitDecompress", failure);
    BIND(jpeg, library, decompress_header3, "tjDecompressHeader3", failure);
    BIND(jpeg, library, decompress2, "tjDecompress2", failure);
    BIND(jpeg, library, error_string, "tjGetErrorStr2", failure);
    BIND(jpeg, library, destroy, "tjDestroy", failure);
}

const char *coffer_qr_load_jpeg(void) {
    pthread_once(&jpeg_once, load_jpeg);
    return jpeg_failure;
}

// libqrencode.
typedef struct { int version; int width; unsigned char *data; } qrcode_abi;
enum { QR_ECLEVEL_M_ABI = 1, QR_MODE_8_ABI = 2 };
static struct {
    qrcode_abi *(*encode_string)(const char *, int, int, int, int);
    void (*free_code)(qrcode_abi *);
} qrencode;
static pthread_once_t qrencode_once = PTHREAD_ONCE_INIT;
static const char *qrencode_failure = NULL;

static void load_qrencode(void) {
    void *library = open_library("COFFER_LIBQRENCODE", "libqrencode.so.4");
    if (library == NULL) {
        qrencode_failure = "libqrencode.so.4 is not installed; install it (Debian/Ubuntu: apt-get install libqrencode4)";
        return;
    }
    const char **failure = &qrencode_failure;
    BIND(qrencode, library, encode_string, "QRcode_encodeString", failure);
    BIND(qrencode, library, free_code, "QRcode_free", failure);
}

const char *coffer_qr_load_qrencode(void) {
    pthread_once(&qrencode_once, load_qrencode);
    return qrencode_failure;
}

// MARK: - Images

static int fail(char *error, size_t size, const char *message) {
    snprintf(error, size, "%s", message);
    return 1;
}

int coffer_qr_decode_png(const unsigned char *data, size_t length, size_t max_pixels,
                         unsigned char **pixels, unsigned *width, unsigned *height, char *error, size_t error_size) {
    if (coffer_qr_load_png() != NULL) return fail(error, error_size, coffer_qr_load_png());
    png_image_abi image;
    memset(&image, 0, sizeof image);
    image.version = PNG_IMAGE_VERSION_ABI;
    if (!png.begin_read_from_memory(&image, data, length)) return fail(error, error_size, image.message[0] ? image.message : "not a PNG image");
    if (image.width == 0 || image.height == 0 || (size_t)image.width * image.height > max_pixels) {
        png.image_free(&image);
        return fail(error, error_size, "the image has too many pixels to hold a QR code worth reading");
    }
    image.format = PNG_FORMAT_GRAY_ABI;
    unsigned char *buffer = malloc((size_t)image.width * image.height);
    if (buffer == NULL) {
        png.image_free(&image);
        return fail(error, error_size, "out of memory");
    }
    // Transparent pixels are composed over white, as a QR code is printed.
    png_color_abi white = {255, 255, 255};
    if (!png.finish_read(&image, &white, buffer, 0, NULL)) {
        free(buffer);
        png.image_free(&image);
        return fail(error, error_size, image.message[0] ? image.message : "the PNG data is damaged");
    }
    *pixels = buffer;
    *width = image.width;
    *height = image.height;
    png.image_free(&image);
    return 0;
}

int coffer_qr_decode_jpeg(const unsigned char *data, size_t length, size_t max_pixels,
                          unsigned char **pixels, unsigned *width, unsigned *height, char *error, size_t error_size) {
    if (coffer_qr_load_jpeg() != NULL) return fail(error, error_size, coffer_qr_load_jpeg());
    void *handle = jpeg.init_decompress();
    if (handle == NULL) return fail(error, error_size, "TurboJPEG could not start");
    int w = 0, h = 0, subsampling = 0, colorspace = 0;
    if (jpeg.decompress_header3(handle, data, (unsigned long)length, &w, &h, &subsampling, &colorspace) != 0) {
        int status = fail(error, error_size, jpeg.error_string(handle));
        jpeg.destroy(handle);
        return status;
    }
    if (w <= 0 || h <= 0 || (size_t)w * (size_t)h > max_pixels) {
        jpeg.destroy(handle);
        return fail(error, error_size, "the image has too many pixels to hold a QR code worth reading");
    }
    int scale = 1;
    while (scale < 8 && (size_t)((w + scale - 1) / scale) * (size_t)((h + scale - 1) / scale) > jpeg_decoded_pixels) scale *= 2;
    w = (w + scale - 1) / scale;
    h = (h + scale - 1) / scale;
    unsigned char *buffer = malloc((size_t)w * (size_t)h);
    if (buffer == NULL) {
        jpeg.destroy(handle);
        return fail(error, error_size, "out of memory");
    }
    if (jpeg.decompress2(handle, data, (unsigned long)length, buffer, w, w, h, TJPF_GRAY_ABI,
                         TJFLAG_STOPONWARNING_ABI | TJFLAG_LIMITSCANS_ABI) != 0) {
        int status = fail(error, error_size, jpeg.error_string(handle));
        free(buffer);
        jpeg.destroy(handle);
        return status;
    }
    jpeg.destroy(handle);
    *pixels = buffer;
    *width = (unsigned)w;
    *height = (unsigned)h;
    return 0;
}

// MARK: - Scanning

enum { ZBAR_NONE_ABI = 0, ZBAR_QRCODE_ABI = 64, ZBAR_CFG_ENABLE_ABI = 0 };

int coffer_qr_scan(const unsigned char *pixels, unsigned width, unsigned height, coffer_qr_symbols *symbols) {
    memset(symbols, 0, sizeof *symbols);
    if (coffer_qr_load_zbar() != NULL) return 1;
    void *scanner = zbar.scanner_create();
    if (scanner == NULL) return 1;
    // QR codes only: other symbologies would turn noise into "barcodes".
    zbar.scanner_set_config(scanner, ZBAR_NONE_ABI, ZBAR_CFG_ENABLE_ABI, 0);
    zbar.scanner_set_config(scanner, ZBAR_QRCODE_ABI, ZBAR_CFG_ENABLE_ABI, 1);
    void *image = zbar.image_create();
    if (image == NULL) {
        zbar.scanner_destroy(scanner);
        return 1;
    }
    zbar.image_set_format(image, (unsigned long)'Y' | ((unsigned long)'8' << 8) | ((unsigned long)'0' << 16) | ((unsigned long)'0' << 24));
    zbar.image_set_size(image, width, height);
    zbar.image_set_data(image, pixels, (unsigned long)width * height, NULL);
    int found = zbar.scan_image(scanner, image);
    int status = found < 0 ? 1 : 0;
    for (const void *symbol = found > 0 ? zbar.first_symbol(image) : NULL; symbol != NULL && status == 0; symbol = zbar.symbol_next(symbol)) {
        size_t length = zbar.symbol_get_data_length(symbol);
        char **texts = realloc(symbols->texts, (symbols->count + 1) * sizeof *texts);
        size_t *lengths = realloc(symbols->lengths, (symbols->count + 1) * sizeof *lengths);
        char *text = malloc(length + 1);
        if (texts) symbols->texts = texts;
        if (lengths) symbols->lengths = lengths;
        if (texts == NULL || lengths == NULL || text == NULL) {
            free(text);
            status = 1;
            break;
        }
        memcpy(text, zbar.symbol_get_data(symbol), length);
        text[length] = 0;
        symbols->texts[symbols->count] = text;
        symbols->lengths[symbols->count] = length;
        symbols->count += 1;
    }
    zbar.image_destroy(image);
    zbar.scanner_destroy(scanner);
    if (status != 0) coffer_qr_symbols_free(symbols);
    return status;
}

void coffer_qr_symbols_free(coffer_qr_symbols *symbols) {
    for (size_t index = 0; index < symbols->count; index++) free(symbols->texts[index]);
    free(symbols->texts);
    free(symbols->lengths);
    memset(symbols, 0, sizeof *symbols);
}

// MARK: - Encoding

int coffer_qr_encode(const char *text, unsigned char **modules, unsigned *width) {
    if (coffer_qr_load_qrencode() != NULL) return 1;
    qrcode_abi *code = qrencode.encode_string(text, 0, QR_ECLEVEL_M_ABI, QR_MODE_8_ABI, 1);
    if (code == NULL) return 1;
    size_t count = (size_t)code->width * code->width;
    unsigned char *buffer = malloc(count);
    if (buffer == NULL) {
        qrencode.free_code(code);
        return 1;
    }
    for (size_t index = 0; index < count; index++) buffer[index] = code->data[index] & 1;
    *modules = buffer;
    *width = (unsigned)code->width;
    qrencode.free_code(code);
    return 0;
}

void coffer_qr_free(void *pointer) {
    free(pointer);
}
