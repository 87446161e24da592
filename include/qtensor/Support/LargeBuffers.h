//===- LargeBuffers.h - Reuse of tensor-sized heap buffers ------*- C++ -*-===//
//
// Compiling and verifying a model allocates and frees buffers of one
// tensor's size (tens to hundreds of MB) for every linear. glibc maps each
// allocation above 32 MiB afresh and unmaps it on free, so every page of
// every such buffer is faulted in and zeroed by the kernel again: on a
// 2-block 7B-shaped compile that was 17 s of system time beside 41 s of user
// time (docs/benchmarks.md). keepLargeBuffersForReuse serves buffers of up
// to 1 GiB from the heap and keeps freed ones for the next tensor: peak
// resident memory rises by about the largest buffers' size (0.92 to 1.33
// GB there), and stays independent of the model's size.
//
// Process-wide (mallopt): the tools call it at start-up; a program
// embedding the compiler decides for itself. A no-op outside glibc.
//
//===----------------------------------------------------------------------===//
#ifndef QTENSOR_SUPPORT_LARGEBUFFERS_H
#define QTENSOR_SUPPORT_LARGEBUFFERS_H

namespace qtensor {

void keepLargeBuffersForReuse();

} // namespace qtensor

#endif // QTENSOR_SUPPORT_LARGEBUFFERS_H
