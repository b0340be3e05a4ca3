//===- RecomputeLaneIndices.cpp - Lane indices again after loops -*- C++
//-*-===//
//
// See RecomputeLaneIndices.h for why. The values cloned are arithmetic on
// the workitem id (and on anything uniform), computed outside loops and
// before one; their uses after the loop move to the clones. "After" is the
// first block on the loop exit's post-dominator chain, the exit included,
// that the loop header does not dominate (where a guarded loop's skip path
// joins), or else the exit.
//
//===----------------------------------------------------------------------===//

#include "compiler/RecomputeLaneIndices.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/PostOrderIterator.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Analysis/LoopInfo.h"
#include "llvm/Analysis/PostDominators.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/Dominators.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/InlineAsm.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/IR/IntrinsicsAMDGPU.h"
#include "llvm/IR/Metadata.h"
#include "llvm/Transforms/Utils/ValueMapper.h"

using namespace llvm;

namespace tk::rocm {
namespace {

/// Instructions a chain may hold: pure, cheap and free of memory.
bool isArithmetic(const Instruction &inst) {
  return isa<BinaryOperator, CastInst, CmpInst, SelectInst, FreezeInst,
             GetElementPtrInst, MinMaxIntrinsic>(inst);
}

/// A workitem id is its wave's first id plus its lane only where the
/// workgroup is one row of whole waves.
bool isOneRowOfWholeWaves(const Function &kernel, unsigned waveSize) {
  MDNode *size = kernel.getMetadata("reqd_work_group_size");
  if (!size || size->getNumOperands() != 3)
    return false;
  auto extent = [&](unsigned dim) -> uint64_t {
    auto *value = mdconst::dyn_extract<ConstantInt>(size->getOperand(dim));
    return value ? value->getZExtValue() : 0;
  };
  return extent(0) > 0 && extent(0) % waveSize == 0 && extent(1) == 1 &&
         extent(2) == 1;
}

IntrinsicInst *findOnlyWorkitemId(Function &kernel) {
  IntrinsicInst *found = nullptr;
  for (BasicBlock &block : kernel)
    for (Instruction &inst : block)
      if (auto *call = dyn_cast<IntrinsicInst>(&inst);
          call && call->getIntrinsicID() == Intrinsic::amdgcn_workitem_id_x) {
        // Optimised IR reads it once; more reads are left as they are.
        if (found)
          return nullptr;
        found = call;
      }
  return found;
}

/// The lane's index in its wave, as inline assembly: the register allocator
/// may recompute an intrinsic's v_mbcnt where it likes, but MachineCSE
/// would also merge a later loop's with an earlier one's.
Value *emitLaneId(IRBuilder<> &builder, unsigned waveSize) {
  const char *text = waveSize == 32 ? "v_mbcnt_lo_u32_b32 $0, -1, 0"
                                    : "v_mbcnt_lo_u32_b32 $0, -1, 0\n\t"
                                      "v_mbcnt_hi_u32_b32 $0, -1, $0";
  auto *type = FunctionType::get(builder.getInt32Ty(), false);
  return builder.CreateCall(InlineAsm::get(type, text, "=v", false), {},
                            "lane");
}

} // namespace

unsigned countOutermostLoops(Function &kernel) {
  if (kernel.isDeclaration())
    return 0;
  DominatorTree dominators(kernel);
  LoopInfo loops(dominators);
  return std::distance(loops.begin(), loops.end());
}

unsigned recomputeLaneIndicesAfterLoops(Function &kernel, unsigned waveSize,
                                        int onlyLoop) {
  if (kernel.isDeclaration() || (waveSize != 32 && waveSize != 64) ||
      !isOneRowOfWholeWaves(kernel, waveSize))
    return 0;
  IntrinsicInst *workitemId = findOnlyWorkitemId(kernel);
  if (!workitemId)
    return 0;
  DominatorTree dominators(kernel);
  PostDominatorTree postDominators(kernel);
  LoopInfo loops(dominators);
  ReversePostOrderTraversal<Function *> order(&kernel);
  DenseMap<const BasicBlock *, unsigned> position;
  for (BasicBlock *block : order)
    position[block] = position.size();
  SmallVector<Loop *> outermost(loops.begin(), loops.end());
  llvm::sort(outermost, [&](Loop *a, Loop *b) {
    return position[a->getHeader()] < position[b->getHeader()];
  });

  // Values that are this lane's workitem id: the read and each recomputation.
  SmallPtrSet<Value *, 4> ids = {workitemId};
  Value *waveFirstId = nullptr;
  unsigned cloned = 0;
  for (auto [index, loop] : llvm::enumerate(outermost)) {
    if (onlyLoop >= 0 && index != static_cast<size_t>(onlyLoop))
      continue;
    BasicBlock *exit = loop->getUniqueExitBlock();
    if (!exit)
      continue;
    BasicBlock *after = exit;
    for (DomTreeNode *node = postDominators.getNode(exit);
         node && node->getBlock(); node = node->getIDom())
      if (!dominators.dominates(loop->getHeader(), node->getBlock())) {
        after = node->getBlock();
        break;
      }

    // The lane-dependent arithmetic outside loops, in definition order.
    SetVector<Instruction *> derived;
    for (BasicBlock *block : order) {
      if (loops.getLoopFor(block))
        continue;
      for (Instruction &inst : *block)
        if (isArithmetic(inst) &&
            llvm::any_of(inst.operands(), [&](Value *operand) {
              auto *def = dyn_cast<Instruction>(operand);
              return ids.contains(operand) || (def && derived.contains(def));
            }))
          derived.insert(&inst);
    }
    // Those computed before the loop and used after it, with what they read.
    auto isAfter = [&](Use &use) {
      auto *user = cast<Instruction>(use.getUser());
      BasicBlock *block = isa<PHINode>(user)
                              ? cast<PHINode>(user)->getIncomingBlock(use)
                              : user->getParent();
      return dominators.dominates(after, block) &&
             !(isa<PHINode>(user) && user->getParent() == after);
    };
    SmallPtrSet<Instruction *, 32> needed;
    SmallVector<Instruction *> worklist;
    for (Instruction *inst : derived)
      if (dominators.properlyDominates(inst->getParent(), loop->getHeader()) &&
          llvm::any_of(inst->uses(), isAfter))
        worklist.push_back(inst);
    while (!worklist.empty()) {
      Instruction *inst = worklist.pop_back_val();
      if (!needed.insert(inst).second)
        continue;
      for (Value *operand : inst->operands())
        if (auto *def = dyn_cast<Instruction>(operand);
            def && derived.contains(def))
          worklist.push_back(def);
    }
    if (needed.empty())
      continue;
    // Every other value a clone reads must be there after the loop.
    Instruction *insertion = &*after->getFirstInsertionPt();
    bool available = llvm::all_of(needed, [&](Instruction *inst) {
      return llvm::all_of(inst->operands(), [&](Value *operand) {
        auto *def = dyn_cast<Instruction>(operand);
        return !def || ids.contains(def) || needed.contains(def) ||
               dominators.dominates(def, insertion);
      });
    });
    if (!available)
      continue;

    if (!waveFirstId) {
      // Uniform, so in an SGPR: the first active lane's id, rounded down to
      // its wave's first (every lane is active where the kernel begins).
      IRBuilder<> builder(workitemId->getNextNode());
      Value *first =
          builder.CreateIntrinsic(Intrinsic::amdgcn_readfirstlane,
                                  {builder.getInt32Ty()}, {workitemId});
      waveFirstId = builder.CreateAnd(first, ~(waveSize - 1), "wave.first");
    }
    IRBuilder<> builder(insertion);
    Value *lane = emitLaneId(builder, waveSize);
    Value *id = builder.CreateAdd(waveFirstId, lane, "workitem.after_loop",
                                  /*HasNUW=*/true, /*HasNSW=*/true);
    ValueToValueMapTy clones;
    for (Value *previous : ids)
      clones[previous] = id;
    for (Instruction *inst : derived) {
      if (!needed.contains(inst))
        continue;
      Instruction *clone = inst->clone();
      clone->setName(inst->getName());
      RemapInstruction(clone, clones,
                       RF_NoModuleLevelChanges | RF_IgnoreMissingLocals);
      builder.Insert(clone);
      clones[inst] = clone;
    }
    for (Instruction *inst : needed)
      for (Use &use : llvm::make_early_inc_range(inst->uses()))
        if (isAfter(use))
          use.set(clones[inst]);
    ids.insert(id);
    cloned += needed.size();
  }
  return cloned;
}

} // namespace tk::rocm
