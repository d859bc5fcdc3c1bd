// bsplib/launch/pmix_launch.h: a job started by a PMIx launcher (srun --mpi=pmix, Open
// MPI's mpirun) instead of bsprun. Rank 0 hosts the coordinator; its address, the job id
// and the job's secret reach the other ranks through the launcher's key-value store
// (PMIx_Put, a fence, PMIx_Get). libpmix.so.2 is loaded with dlopen only when the
// environment says PMIx started this process, so other programs never need it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "auth/mac.h"

namespace bsp::launch::pmix {

// True when a PMIx launcher started this process (PMIX_RANK and PMIX_NAMESPACE are set)
// and bsprun did not (BSP_CONTROL is not set).
bool started_by_pmix();

// When srun started several tasks without PMIx (no --mpi=pmix, and MpiDefault is not
// pmix), each would start a job of its own: what to tell the user; "" otherwise.
std::string srun_without_pmix();

// This process's rank as the launcher's environment says (PMIX_RANK); no PMIx call.
int environment_rank();

// The number of processes the launcher started (PMIX_JOB_SIZE); connects to the
// launcher's PMIx server on first use. Throws std::runtime_error.
int job_size();

// How every process reaches the coordinator rank 0 hosts.
struct Contact {
  std::string hosts;  // addresses to try in order, separated by commas
  unsigned short port = 0;
  std::uint32_t job_id = 0;
  auth::Key secret{};
};

// Rank 0 passes its coordinator's port, job id and secret (`mine`; hosts are filled in
// here: loopback when the whole job is on one node, else every address of this host,
// loopback last); every rank returns rank 0's contact after a fence over the job's
// processes (a barrier too: the coordinator listens before anyone connects). Throws.
Contact exchange(const std::optional<Contact>& mine);

// Ends this process's PMIx session (PMIx_Finalize) if it has one; safe to call twice.
// Every exit with status 0 must pass here, or mpirun reports an improper exit.
void finalize();

// Asks the launcher to kill every process of the job (PMIx_Abort), so that processes
// computing outside BSPlib stop too. Waits at most ~2 s for the launcher; returns if it
// has not acted by then. Does nothing without a PMIx session.
void abort_job(int status, const std::string& message);

}  // namespace bsp::launch::pmix
