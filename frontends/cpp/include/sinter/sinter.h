//===- sinter.h - the Sinter C++ API --------------------------------------===//
//
// The one header users include. It grows with the API: tensors, autograd,
// nn, optim and mark_step join the dtype and device types here.
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_SINTER_H
#define SINTER_SINTER_H

#include "sinter/Aot.h"
#include "sinter/Compare.h"
#include "sinter/Compiler.h"
#include "sinter/DType.h"
#include "sinter/Device.h"
#include "sinter/Distributed.h"
#include "sinter/Error.h"
#include "sinter/Metrics.h"
#include "sinter/Reference.h"
#include "sinter/Session.h"
#include "sinter/Shape.h"
#include "sinter/Tensor.h"
#include "sinter/Version.h"
#include "sinter/data/DataLoader.h"
#include "sinter/data/Datasets.h"
#include "sinter/data/Text.h"
#include "sinter/io/AtomicFile.h"
#include "sinter/io/Safetensors.h"
#include "sinter/models/Models.h"
#include "sinter/nn/Functional.h"
#include "sinter/nn/Layers.h"
#include "sinter/nn/Module.h"
#include "sinter/optim/Optimizer.h"

#endif // SINTER_SINTER_H
