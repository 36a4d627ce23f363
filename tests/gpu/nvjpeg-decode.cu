// gst-wsi
// Copyright (C) 2026 gst-wsi developers
// SPDX-License-Identifier: LGPL-2.1-or-later
//
// nvjpeg-decode: tiles/s of a batched GPU decode (nvjpegDecodeBatched) of
// the JPEG tiles of a jpeg-tiles file, for each nvJPEG backend the device
// offers (HARDWARE: the A100/H100 JPEG engines; GPU_HYBRID: Huffman on the
// GPU; DEFAULT), against which tests/gpu/jpeg-decode-cpu.c is the CPU side
// (issue 25). Compiled on the GPU machine by tests/gpu/run.sh:
//
//   nvcc -O2 -o nvjpeg-decode nvjpeg-decode.cu -lnvjpeg -lcudart
//   nvjpeg-decode TILES ROUNDS BATCH [CPU_DUMP]
//
// Timed: ROUNDS passes over all tiles in batches of BATCH (the last batch
// of the run wraps around to the first tiles: nvjpegDecodeBatched decodes a
// fixed batch size), from host memory (the library copies the compressed
// bytes to the device: that copy is counted) into interleaved RGB in device
// memory, until the stream is synchronised. CPU_DUMP (jpeg-decode-cpu's
// DUMP file): those tiles are decoded on the GPU too, copied back and
// compared: mean and max absolute difference per byte (IDCTs differ a
// little). Exit 0 when at least one backend decoded every tile.
//
// Built without nvjpeg.h (some CUDA images ship libnvjpeg without its
// header), it declares the few calls it uses from nvJPEG's documented API.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <cuda_runtime_api.h>

#if __has_include(<nvjpeg.h>)
#include <nvjpeg.h>
#else
extern "C" {
typedef int nvjpegStatus_t;
typedef enum { NVJPEG_BACKEND_DEFAULT = 0, NVJPEG_BACKEND_HYBRID = 1,
  NVJPEG_BACKEND_GPU_HYBRID = 2, NVJPEG_BACKEND_HARDWARE = 3 } nvjpegBackend_t;
typedef enum { NVJPEG_OUTPUT_RGBI = 5 } nvjpegOutputFormat_t;
typedef int nvjpegChromaSubsampling_t;
typedef struct { unsigned char *channel[4]; size_t pitch[4]; } nvjpegImage_t;
typedef struct nvjpegHandle *nvjpegHandle_t;
typedef struct nvjpegJpegState *nvjpegJpegState_t;
nvjpegStatus_t nvjpegCreateEx(nvjpegBackend_t, void *, void *, unsigned int,
    nvjpegHandle_t *);
nvjpegStatus_t nvjpegDestroy(nvjpegHandle_t);
nvjpegStatus_t nvjpegJpegStateCreate(nvjpegHandle_t, nvjpegJpegState_t *);
nvjpegStatus_t nvjpegJpegStateDestroy(nvjpegJpegState_t);
nvjpegStatus_t nvjpegGetImageInfo(nvjpegHandle_t, const unsigned char *, size_t,
    int *, nvjpegChromaSubsampling_t *, int *, int *);
nvjpegStatus_t nvjpegDecodeBatchedInitialize(nvjpegHandle_t, nvjpegJpegState_t,
    int, int, nvjpegOutputFormat_t);
nvjpegStatus_t nvjpegDecodeBatched(nvjpegHandle_t, nvjpegJpegState_t,
    const unsigned char *const *, const size_t *, nvjpegImage_t *, cudaStream_t);
}
#endif

#include "jpeg-tiles-file.h"

namespace {

struct Backend {
  nvjpegBackend_t id;
  const char *name;
};

struct CpuTile {                // one tile of jpeg-decode-cpu's DUMP
  uint32_t index, width, height;
  std::vector<unsigned char> rgb;
};

std::vector<CpuTile> load_dump(const char *path) {
  std::vector<CpuTile> tiles;
  FILE *f = fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "%s: cannot open the CPU dump\n", path);
    return tiles;
  }
  uint32_t head[3];
  while (fread(head, 4, 3, f) == 3) {
    CpuTile t{head[0], head[1], head[2], {}};
    t.rgb.resize((size_t) t.width * t.height * 3);
    if (fread(t.rgb.data(), 1, t.rgb.size(), f) != t.rgb.size())
      break;
    tiles.push_back(std::move(t));
  }
  fclose(f);
  return tiles;
}

// One backend's decoder: a handle, a batched state for BATCH images and
// one device output buffer per batch slot, big enough for the largest tile.
class Decoder {
 public:
  Decoder(const Backend &b, int batch, size_t slot_bytes) : backend_(b), batch_(batch) {
    status_ = nvjpegCreateEx(b.id, nullptr, nullptr, 0, &handle_);
    if (status_ == 0)
      status_ = nvjpegJpegStateCreate(handle_, &state_);
    if (status_ == 0)
      status_ = nvjpegDecodeBatchedInitialize(handle_, state_, batch, 1, NVJPEG_OUTPUT_RGBI);
    slots_.resize(batch);
    for (auto &s : slots_)
      if (cudaMalloc(&s, slot_bytes) != cudaSuccess)
        status_ = -1;
    cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking);
  }
  ~Decoder() {
    for (auto s : slots_)
      cudaFree(s);
    if (state_)
      nvjpegJpegStateDestroy(state_);
    if (handle_)
      nvjpegDestroy(handle_);
    cudaStreamDestroy(stream_);
  }
  bool ok() const { return status_ == 0; }
  int status() const { return status_; }

  // Decodes tiles order[first .. first+batch) (indices into tiles) into
  // the slots; widths must hold every tile's width.
  int decode(const JpegTiles &tiles, const std::vector<uint32_t> &order, size_t first,
      const std::vector<int> &widths) {
    std::vector<const unsigned char *> data(batch_);
    std::vector<size_t> lengths(batch_);
    std::vector<nvjpegImage_t> out(batch_);
    for (int i = 0; i < batch_; i++) {
      uint32_t t = order[(first + i) % order.size()];
      data[i] = tiles.data[t];
      lengths[i] = tiles.length[t];
      memset(&out[i], 0, sizeof out[i]);
      out[i].channel[0] = slots_[i];
      out[i].pitch[0] = (size_t) widths[t] * 3;
    }
    return nvjpegDecodeBatched(handle_, state_, data.data(), lengths.data(), out.data(),
        stream_);
  }
  int sync() { return cudaStreamSynchronize(stream_) == cudaSuccess ? 0 : -1; }
  unsigned char *slot(int i) const { return slots_[i]; }

 private:
  Backend backend_;
  int batch_;
  int status_ = 0;
  nvjpegHandle_t handle_ = nullptr;
  nvjpegJpegState_t state_ = nullptr;
  cudaStream_t stream_ = nullptr;
  std::vector<unsigned char *> slots_;
};

// Decodes the CPU dump's tiles on the GPU and prints the byte differences.
void compare(Decoder &dec, const JpegTiles &tiles, const std::vector<int> &widths,
    const std::vector<CpuTile> &cpu, int batch, const char *name) {
  std::vector<uint32_t> order;
  for (auto &t : cpu)
    order.push_back(t.index);
  if (order.empty() || (int) order.size() > batch)
    return;
  if (dec.decode(tiles, order, 0, widths) != 0 || dec.sync() != 0) {
    printf("  %s: comparison decode failed\n", name);
    return;
  }
  double sum = 0;
  size_t bytes = 0;
  int worst = 0;
  for (size_t i = 0; i < cpu.size(); i++) {
    std::vector<unsigned char> gpu(cpu[i].rgb.size());
    cudaMemcpy(gpu.data(), dec.slot((int) i), gpu.size(), cudaMemcpyDeviceToHost);
    double tile_sum = 0;
    for (size_t k = 0; k < gpu.size(); k++) {
      int d = abs((int) gpu[k] - (int) cpu[i].rgb[k]);
      tile_sum += d;
      worst = d > worst ? d : worst;
    }
    sum += tile_sum;
    bytes += gpu.size();
    printf("  %s: tile %u mean |GPU-CPU| %.3f\n", name, cpu[i].index, tile_sum / gpu.size());
  }
  printf("  %s vs libjpeg-turbo: %zu tiles, mean |diff| %.3f per byte, max %d\n", name,
      cpu.size(), sum / bytes, worst);
}

}  // namespace

int main(int argc, char **argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: nvjpeg-decode TILES ROUNDS BATCH [CPU_DUMP]\n");
    return 2;
  }
  JpegTiles tiles;
  if (jpeg_tiles_load(argv[1], &tiles) < 0)
    return 1;
  int rounds = atoi(argv[2]), batch = atoi(argv[3]);
  std::vector<CpuTile> cpu;
  if (argc >= 5)
    cpu = load_dump(argv[4]);

  cudaFree(nullptr);            // make the context before timing anything
  Backend probe{NVJPEG_BACKEND_DEFAULT, "DEFAULT"};
  nvjpegHandle_t info_handle;
  if (nvjpegCreateEx(probe.id, nullptr, nullptr, 0, &info_handle) != 0) {
    fprintf(stderr, "nvjpegCreateEx failed: no usable nvJPEG\n");
    return 1;
  }
  std::vector<int> widths(tiles.count);
  size_t slot_bytes = 0;
  uint64_t compressed = 0;
  for (uint32_t t = 0; t < tiles.count; t++) {
    int n = 0, w[4] = {0}, h[4] = {0};
    nvjpegChromaSubsampling_t css;
    if (nvjpegGetImageInfo(info_handle, tiles.data[t], tiles.length[t], &n, &css, w, h) != 0) {
      fprintf(stderr, "tile %u: nvjpegGetImageInfo refused it\n", t);
      return 1;
    }
    widths[t] = w[0];
    slot_bytes = std::max(slot_bytes, (size_t) w[0] * h[0] * 3);
    compressed += tiles.length[t];
    if (t == 0)
      printf("tile 0: %d components, %dx%d, chroma subsampling %d\n", n, w[0], h[0], (int) css);
  }
  nvjpegDestroy(info_handle);

  std::vector<uint32_t> order(tiles.count);
  for (uint32_t t = 0; t < tiles.count; t++)
    order[t] = t;
  size_t total = (size_t) tiles.count * rounds;
  size_t calls = (total + batch - 1) / batch;
  const Backend backends[] = {{NVJPEG_BACKEND_HARDWARE, "HARDWARE"},
      {NVJPEG_BACKEND_GPU_HYBRID, "GPU_HYBRID"}, {NVJPEG_BACKEND_DEFAULT, "DEFAULT"}};
  int good = 0;
  for (const Backend &b : backends) {
    Decoder dec(b, batch, slot_bytes);
    if (!dec.ok()) {
      printf("gpu nvjpeg %s: not available (status %d)\n", b.name, dec.status());
      continue;
    }
    if (dec.decode(tiles, order, 0, widths) != 0 || dec.sync() != 0) {   // warm-up
      printf("gpu nvjpeg %s: warm-up batch failed\n", b.name);
      continue;
    }
    auto t0 = std::chrono::steady_clock::now();
    int failed = 0;
    for (size_t c = 0; c < calls; c++)
      failed += dec.decode(tiles, order, c * batch, widths) != 0;
    failed += dec.sync() != 0;
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    size_t done = calls * batch;
    printf("gpu nvjpeg %s: batch=%d tiles=%u rounds=%d decoded=%zu failed_calls=%d "
        "%.3f s  %.0f tiles/s  %.1f MB/s compressed\n", b.name, batch, tiles.count, rounds,
        done, failed, s, done / s, compressed * (double) done / tiles.count / s / 1e6);
    if (failed == 0)
      good++;
    compare(dec, tiles, widths, cpu, batch, b.name);
  }
  jpeg_tiles_free(&tiles);
  return good > 0 ? 0 : 1;
}
