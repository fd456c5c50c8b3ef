// The training steps of the model zoo, recorded by the C++ API and lowered to
// the sinter dialect (what mark_step() hands to the compiler), verify and
// simplify: transposes fold into matmul flags, embeddings become gather and
// their gradients scatter_add, convolutions get both gradients.
//
// RUN: sinter-dump-step --model mlp | FileCheck %s --check-prefix=MLP
// RUN: sinter-dump-step --model mlp | sinter-opt --canonicalize --cse | FileCheck %s --check-prefix=MLP-OPT
// RUN: sinter-dump-step --model mlp --locations | FileCheck %s --check-prefix=LOC
// RUN: sinter-dump-step --model lenet --batch_size 2 | sinter-opt --canonicalize --cse | FileCheck %s --check-prefix=LENET
// RUN: sinter-dump-step --model resnet18 --batch_size 2 | sinter-opt --canonicalize --cse | FileCheck %s --check-prefix=RESNET
// RUN: sinter-dump-step --model gpt-mini --batch_size 2 | sinter-opt --canonicalize --cse | FileCheck %s --check-prefix=GPT
// RUN: sinter-dump-step --model bert-mini --batch_size 2 --optimizer sgd | sinter-opt --canonicalize --cse | FileCheck %s --check-prefix=BERT
// RUN: sinter-dump-step --model gpt-mini --batch_size 2 | sinter-opt --canonicalize --cse --sinter-fusion | FileCheck %s --strict-whitespace --check-prefix=GPT-FUSED
// RUN: sinter-dump-step --model gpt-mini --batch_size 2 | sinter-opt --canonicalize --cse --sinter-fusion | FileCheck %s --strict-whitespace --check-prefix=GPT-TOP
// RUN: sinter-dump-step --model gpt-mini --batch_size 2 | sinter-opt --canonicalize --cse --sinter-fusion | FileCheck %s --check-prefix=GPT-SOFTMAX
// RUN: sinter-dump-step --model gpt-mini --batch_size 2 | sinter-opt --canonicalize --cse --sinter-fusion | FileCheck %s --check-prefix=GPT-NORMS
// RUN: sinter-dump-step --model resnet18 --batch_size 2 | sinter-opt --canonicalize --cse --sinter-fusion | sinter-opt > /dev/null

// The batch (targets, images), the four parameters and AdamW's three
// per-step scalars (decay factor, bias corrections with the learning rate:
// data, so the step's structure does not change with them) in; the loss and
// the four updated parameters out.
// MLP: func.func @train_step(%arg0: tensor<4xi64>, %arg1: tensor<4x784xf32>, %arg2: tensor<256x784xf32>, %arg3: tensor<256xf32>, %arg4: tensor<10x256xf32>, %arg5: tensor<10xf32>, %arg6: tensor<f32>, %arg7: tensor<f32>, %arg8: tensor<f32>) -> (tensor<f32>, tensor<256x784xf32>, tensor<256xf32>, tensor<10x256xf32>, tensor<10xf32>)

// Two matmuls forward, three backward (no gradient for the input batch).
// MLP-OPT-LABEL: func.func @train_step
// MLP-OPT-NOT: sinter.transpose
// MLP-OPT-COUNT-5: sinter.matmul
// MLP-OPT-NOT: sinter.matmul
// MLP-OPT: return

// Every op carries the user's line: here, the call of the model in the
// tools' zoo task (tools/common/ZooTask.cpp).
// LOC: sinter.matmul {{.*}} loc(#[[LOC:loc[0-9]*]])
// LOC: #[[LOC]] = loc("{{.*}}ZooTask.cpp":{{[0-9]+}}:{{[0-9]+}})

// LENET-LABEL: func.func @train_step
// LENET-DAG: sinter.conv2d
// LENET-DAG: sinter.pool2d max
// LENET-DAG: sinter.pool2d_backward max
// LENET-DAG: sinter.conv2d_backward_filter
// LENET: return

// RESNET-LABEL: func.func @train_step
// RESNET-COUNT-20: sinter.conv2d_backward_filter
// RESNET-NOT: sinter.conv2d_backward_filter
// RESNET: return

// GPT-LABEL: func.func @train_step
// GPT-DAG: sinter.gather
// GPT-DAG: sinter.scatter_add
// GELU's tanh (its cube is multiplications after canonicalization).
// GPT-DAG: sinter.tanh
// GPT: return

// BERT-LABEL: func.func @train_step
// BERT-DAG: sinter.erf
// BERT-DAG: sinter.scatter_add
// BERT: return

// After fusion, the step is 152 kernels between the library calls (99
// matrix products, the embeddings' gathers and scatter-adds, the q/k/v
// gradients' concats); nothing elementwise, no reduction and no layout op is
// left outside a fusion. If fusion fused less (every op its own kernel) or
// more, the count changes.
// GPT-FUSED-LABEL: func.func @train_step
// GPT-FUSED-COUNT-152: {{^    %[0-9]+(:[0-9]+)? = sinter.fusion}}
// GPT-FUSED-NOT: sinter.fusion
// GPT-FUSED: return
// GPT-TOP-LABEL: func.func @train_step
// GPT-TOP-NOT: {{^    %[0-9]+(:[0-9]+)? = sinter\.(add|sub|mul|div|neg|exp|log|tanh|rsqrt|sqrt|erf|max|min|pow|select|compare|convert|broadcast_in_dim|reduce_sum|reduce_max|transpose|reshape|slice|iota|random) }}
// GPT-TOP: return

// Each attention softmax is one kernel: its masked row maximum, exp and row
// sum with no yield between them; so is the cross entropy's log-softmax
// over the vocabulary, and nothing else takes a maximum.
// GPT-SOFTMAX-LABEL: func.func @train_step
// GPT-SOFTMAX-COUNT-4: sinter.reduce_max {{.*}}, dims = [3] keepdim : tensor<2x4x16x16xf32>
// GPT-SOFTMAX-NOT: sinter.yield
// GPT-SOFTMAX: sinter.exp
// GPT-SOFTMAX-NOT: sinter.yield
// GPT-SOFTMAX: sinter.reduce_sum {{.*}}, dims = [3] keepdim
// GPT-SOFTMAX: sinter.reduce_max {{.*}}, dims = [1] keepdim : tensor<32x4096xf32>
// GPT-SOFTMAX-NOT: sinter.yield
// GPT-SOFTMAX: sinter.exp
// GPT-SOFTMAX-NOT: sinter.reduce_max
// GPT-SOFTMAX: return

// Each of the nine layer norms (two a block, and the last) computes its
// mean, variance and 1/sigma in one kernel: a row sum, a sum of squares
// and rsqrt, with no yield between them.
// GPT-NORMS-LABEL: func.func @train_step
// GPT-NORMS-COUNT-9: sinter.reduce_sum {{.*}}, dims = [2] keepdim : tensor<2x16x256xf32>{{[[:space:]]+.*}}sinter.constant{{.*[[:space:]]+.*}}sinter.div{{.*[[:space:]]+.*}}sinter.broadcast_in_dim{{.*[[:space:]]+.*}}sinter.sub{{.*[[:space:]]+.*}}sinter.mul{{.*[[:space:]]+.*}}sinter.reduce_sum {{.*}}, dims = [2] keepdim{{.*[[:space:]]+.*}}sinter.div{{.*[[:space:]]+.*}}sinter.constant{{.*[[:space:]]+.*}}sinter.add{{.*[[:space:]]+.*}}sinter.rsqrt
// GPT-NORMS-NOT: sinter.rsqrt
// GPT-NORMS: return
