//===- CollectiveOrder.h - the ranks start the same collectives -*- C++ -*-===//
#ifndef SINTER_RUNTIME_COLLECTIVEORDER_H
#define SINTER_RUNTIME_COLLECTIVEORDER_H

#include "sinter/runtime/Communicator.h"
#include "sinter/runtime/Program.h"
#include "sinter/runtime/Status.h"

namespace sinter::runtime {

/// Compares, across the ranks of `communicator`, the collectives `program`
/// starts, in the order it starts them (Note [The collectives as run]): OK
/// when every rank's program starts the same ones; else every rank fails
/// with the first that differs on each rank.
Status compareCollectiveOrder(const Program &program, Communicator &communicator);

/// compareCollectiveOrder() at the first run of `executable` in each process
/// group of more than one rank; OK without a communicator, in a world of
/// one, and for a program without collectives.
Status checkCollectiveOrderOnce(const Executable *executable, const Program &program,
                                Communicator *communicator);

/// Forgets `executable` (its destructor), so that another at its address is
/// checked again.
void forgetCollectiveOrder(const Executable *executable);
/// Forgets `communicator` (its destructor), likewise.
void forgetCollectiveOrder(const Communicator *communicator);

} // namespace sinter::runtime

#endif // SINTER_RUNTIME_COLLECTIVEORDER_H
