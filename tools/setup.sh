#!/bin/sh
# tools/setup.sh: installs what building and running this project needs on Debian
# (bookworm): Bazel (Debian's bazel-bootstrap), a C++20 compiler, and the system
# libraries wrapped in third_party/BUILD, and the launchers the multi-host tests start
# themselves (sshd, Slurm with munge, Open MPI; PMIx), and clang-format (tools/format.sh).
# Installs only what is missing, so it is quick on every run after the first.
set -e
packages="bazel-bootstrap g++ libboost-dev libfmt-dev libpcap-dev libxdp-dev libbpf-dev clang xxd libsodium-dev libgtest-dev libbenchmark-dev python3 gnuplot-nox iproute2 openssh-server openssh-client slurmd slurmctld slurm-client munge openmpi-bin libpmix-dev man-db groff-base clang-format stress-ng"
missing=""
for package in $packages; do
  dpkg -s "$package" >/dev/null 2>&1 || missing="$missing $package"
done
[ -z "$missing" ] && exit 0
echo "setup: installing$missing"
sudo=""
[ "$(id -u)" -ne 0 ] && sudo="sudo"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq $missing >/dev/null
