#pragma once
// 1 when the tests (and the qmer they run) are built with a sanitizer: heavy tests scale
// themselves down, and tests of memory use skip what shadow memory makes meaningless.
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
#define QMER_TEST_SANITIZED 1
#else
#define QMER_TEST_SANITIZED 0
#endif
