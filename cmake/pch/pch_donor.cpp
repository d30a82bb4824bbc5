// The translation unit of accelbench_pch_lib, which builds our libraries' precompiled header
// (cmake/accelbench_pch.cmake); the targets that reuse it compile their own sources.
