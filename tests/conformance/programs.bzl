"""tests/conformance/programs.bzl: the conformance programs that must pass (print
"conformance <rule> passed", exit 0), one list for every suite that runs them: this
package's conformance_test, and xdp_test across emulated hosts (tests/BUILD); their C++
sources read it as the generated positive_programs.inc."""

POSITIVE = [
    "pid_nprocs",
    "end_only_pid0",
    "time_nondecreasing",
    "push_reg_by_order",
    "pop_reg_most_recent",
    "null_registration",
    "put_copies_source",
    "put_lands_at_sync",
    "put_offsets",
    "put_last_wins",
    "put_to_self",
    "put_many_writers",
    "hpput",
    "get_swap",
    "get_then_put",
    "get_before_put",
    "get_from_self",
    "get_reads_at_sync",
    "hpget",
    "bsmp_next_superstep",
    "bsmp_qsize",
    "bsmp_get_tag_empty",
    "bsmp_move",
    "bsmp_hpmove",
    "bsmp_unmoved_discarded",
    "bsmp_send_to_self",
    "bsmp_tag_size_zero",
    "bsmp_set_tagsize",
    "send_copies_payload",
    "zero_length",
    "empty_supersteps",
    "large_transfers",
]
