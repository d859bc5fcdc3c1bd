// nas/ft/ft.cc: NPB FT on BSPlib: the 3-D diffusion equation solved spectrally. The
// initial field (NPB's random stream) is transformed forward once; each iteration
// multiplies the spectrum by the decay factors, transforms a copy back and takes the
// checksum of 1024 fixed points, checked against the official values. Data is split in
// slabs (slab_layout.h): z-planes in real space, y-rows in frequency space, with one
// all-to-all superstep of puts per 3-D FFT (fft3d.h). As in NPB, an untimed forward FFT
// warms up; the timed region covers the decay factors, the initial field, the forward
// FFT and the iterations. The checksums are summed over processes once, at the end.
#include <cmath>
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "bsplib/bsp.h"
#include "nas/common/collectives.h"
#include "nas/common/options.h"
#include "nas/common/problem_class.h"
#include "nas/common/region_timer.h"
#include "nas/common/report.h"
#include "nas/common/verification.h"
#include "nas/ft/fft3d.h"
#include "nas/ft/slab_layout.h"
#include "nas/ft/spectral_fields.h"

namespace {

using nas::ft::Complex;

constexpr double kEpsilon = 1.0e-12;

struct FtClass {
  int nx, ny, nz;
  std::vector<Complex> checksums;  // official checksum after each iteration
};

const nas::ClassTable<FtClass> kClasses = {
    {'S',
     {64,
      64,
      64,
      {{554.6087004964, 484.5363331978},
       {554.6385409189, 486.5304269511},
       {554.6148406171, 488.3910722336},
       {554.5423607415, 490.1273169046},
       {554.4255039624, 491.7475857993},
       {554.2683411902, 493.2597244941}}}},
    {'W',
     {128,
      128,
      32,
      {{567.3612178944, 529.3246849175},
       {563.1436885271, 528.2149986629},
       {559.4024089970, 527.0996558037},
       {556.0698047020, 526.0027904925},
       {553.0898991250, 524.9400845633},
       {550.4159734538, 523.9212247086}}}},
    {'A',
     {256,
      256,
      128,
      {{504.6735008193, 511.4047905510},
       {505.9412319734, 509.8809666433},
       {506.9376896287, 509.8144042213},
       {507.7892868474, 510.1336130759},
       {508.5233095391, 510.4914655194},
       {509.1487099959, 510.7917842803}}}},
    {'B', {512, 256, 256, {{517.7643571579, 507.7803458597}, {515.4521291263, 508.8249431599},
                           {514.6409228649, 509.6208912659}, {514.2378756213, 510.1023387619},
                           {513.9626667737, 510.3976610617}, {513.7423460082, 510.5948019802},
                           {513.5547056878, 510.7404165783}, {513.3910925466, 510.8576573661},
                           {513.2470705390, 510.9577278523}, {513.1197729984, 511.0460304483},
                           {513.0070319283, 511.1252433800}, {512.9070537032, 511.1968077718},
                           {512.8182883502, 511.2616233064}, {512.7393733383, 511.3203605551},
                           {512.6691062020, 511.3735928093}, {512.6064276004, 511.4218460548},
                           {512.5504076570, 511.4656139760}, {512.5002331720, 511.5053595966},
                           {512.4551951846, 511.5415130407}, {512.4146770029, 511.5744692211}}}},
    {'C', {512, 512, 512, {{519.5078707457, 514.9019699238}, {515.5422171134, 512.7578201997},
                           {514.4678022222, 512.2251847514}, {514.0150594328, 512.1090289018},
                           {513.7550426810, 512.1143685824}, {513.5811056728, 512.1496764568},
                           {513.4569343165, 512.1870921893}, {513.3651975661, 512.2193250322},
                           {513.2955192805, 512.2454735794}, {513.2410471738, 512.2663649603},
                           {513.1971141679, 512.2830879827}, {513.1605205716, 512.2965869718},
                           {513.1290734194, 512.3075927445}, {513.1012720314, 512.3166486553},
                           {513.0760908195, 512.3241541685}, {513.0528295923, 512.3304037599},
                           {513.0310107773, 512.3356167976}, {513.0103090133, 512.3399592211},
                           {512.9905029333, 512.3435588985}, {512.9714421109, 512.3465164008}}}},
};

// The arrays of one process. On one process the space-layout array is the work array
// (the layouts coincide), as in the serial NPB code; otherwise it is separate, and the
// two arrays that transposes write into are registered.
class FtArrays {
 public:
  explicit FtArrays(const nas::ft::SlabLayout& layout)
      : distributed_(layout.nprocs() > 1),
        spectrum_(layout.local_size()),
        work_(layout.local_size()),
        space_storage_(distributed_ ? layout.local_size() : 0),
        twiddle_(layout.local_size()) {
    if (distributed_) {
      bsp_push_reg(spectrum_.data(), bytes(spectrum_));
      bsp_push_reg(space_storage_.data(), bytes(space_storage_));
      bsp_sync();
    }
  }
  ~FtArrays() {
    if (distributed_) {
      bsp_pop_reg(space_storage_.data());
      bsp_pop_reg(spectrum_.data());
    }
  }
  Complex* spectrum() { return spectrum_.data(); }
  Complex* work() { return work_.data(); }
  Complex* space() { return distributed_ ? space_storage_.data() : work_.data(); }
  double* twiddle() { return twiddle_.data(); }

 private:
  static int bytes(const std::vector<Complex>& v) {
    const std::size_t n = v.size() * sizeof(Complex);
    if (n > 0x7fffffffu) bsp_abort("ft: a process's array of %zu bytes exceeds BSPlib's int sizes\n", n);
    return int(n);
  }
  bool distributed_;
  std::vector<Complex> spectrum_, work_, space_storage_;
  std::vector<double> twiddle_;
};

int ft_main(int argc, char** argv) {
  const nas::NpbOptions options = nas::parse_npb_options(argc, argv, "ft", kClasses.letters());
  const FtClass& params = kClasses.at(options.problem_class);
  const int iterations = int(params.checksums.size());
  const std::string size = std::to_string(params.nx) + "x" + std::to_string(params.ny) + "x" +
                           std::to_string(params.nz);
  nas::print_banner("FT", options.problem_class, size);
  std::unique_ptr<nas::ft::SlabLayout> layout;
  try {
    layout = std::make_unique<nas::ft::SlabLayout>(params.nx, params.ny, params.nz, bsp_nprocs(), bsp_pid());
  } catch (const std::invalid_argument& e) {
    bsp_abort("ft: %s\n", e.what());
  }
  if (bsp_pid() == 0)
    std::printf(" Iterations: %d\n Layout: slabs of %d planes\n\n", iterations, layout->local_planes());

  FtArrays arrays(*layout);
  nas::ft::Fft3d fft(*layout);
  // Untimed warm-up, as in NPB: one forward transform of the initial field.
  nas::ft::fill_initial_field(*layout, arrays.space());
  fft.forward(arrays.space(), arrays.spectrum());

  std::vector<double> sums(2 * std::size_t(iterations));  // re, im per iteration
  nas::RegionTimer timer;
  bsp_sync();
  timer.start();
  nas::ft::fill_decay_factors(*layout, arrays.twiddle());
  nas::ft::fill_initial_field(*layout, arrays.space());
  fft.forward(arrays.space(), arrays.spectrum());
  for (int it = 0; it < iterations; ++it) {
    nas::ft::evolve(*layout, arrays.spectrum(), arrays.twiddle(), arrays.work());
    fft.backward(arrays.work(), arrays.space());
    const Complex partial = nas::ft::local_checksum(*layout, arrays.space());
    sums[2 * it] = partial.real();
    sums[2 * it + 1] = partial.imag();
  }
  nas::all_reduce_sum(sums.data(), int(sums.size()));
  timer.stop();

  const double points = double(params.nx) * params.ny * params.nz;
  bool verified = true;
  for (int it = 0; it < iterations; ++it) {
    const Complex checksum = Complex(sums[2 * it], sums[2 * it + 1]) / points;
    const Complex official = params.checksums[it];
    const Complex reference(nas::reference_value(official.real(), options),
                            nas::reference_value(official.imag(), options));
    const double error = std::abs((checksum - reference) / reference);
    const bool ok = error <= kEpsilon;  // also false when the error is NaN
    verified = verified && ok;
    if (bsp_pid() == 0) {
      std::printf(" T = %5d     Checksum = %22.12E %22.12E  error = %9.2E  %s\n", it + 1, checksum.real(),
                  checksum.imag(), error, ok ? "ok" : "FAILED");
    }
  }

  nas::BenchmarkResult result;
  result.name = "FT";
  result.problem_class = options.problem_class;
  result.size = size;
  result.iterations = iterations;
  result.operations = points *
                      (14.8157 + 7.19641 * std::log(points) + (5.23518 + 7.21113 * std::log(points)) * iterations);
  result.operation_type = "floating point";
  result.verified = verified;
  return nas::report_results(result, timer);
}

}  // namespace

int main(int argc, char** argv) {
  bsp_begin(bsp_nprocs());
  const int status = ft_main(argc, argv);
  bsp_end();
  return status;
}
