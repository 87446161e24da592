//===- KernelToolchain.cpp - ptxas, host objects, shared objects ----------===//

#include "qtensor/Target/KernelToolchain.h"
#include "qtensor/Support/ExitCleanup.h"

#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/Target/LLVMIR/Export.h"

#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Object/ELFObjectFile.h"
#include "llvm/Object/ObjectFile.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"
#include "llvm/TargetParser/Host.h"

#include <cstdlib>
#include <fstream>

namespace qtensor::target {

namespace {

/// What a tool printed, cut to a readable size.
std::string toolOutput(const std::string &logPath) {
  auto buffer = llvm::MemoryBuffer::getFile(logPath);
  if (!buffer)
    return "(no output)";
  llvm::StringRef text = (*buffer)->getBuffer().trim();
  if (text.empty())
    return "(no output)";
  constexpr size_t kMax = 4000;
  return text.size() <= kMax ? text.str()
                             : text.take_front(kMax).str() + "\n...";
}

/// Runs `program args...` with stdout and stderr in `<output>.log`. While
/// it runs, a fatal exit of this process kills it (ExitCleanup.h): a tool
/// left running would write into a scratch directory being removed.
Status runTool(const std::string &program, const std::vector<std::string> &args,
               const std::string &output) {
  std::vector<llvm::StringRef> argv = {program};
  for (const std::string &a : args)
    argv.push_back(a);
  const std::string log = output + ".log";
  std::optional<llvm::StringRef> redirects[] = {
      std::nullopt, llvm::StringRef(log), llvm::StringRef(log)};
  std::string message;
  bool couldNotRun = false;
  llvm::sys::ProcessInfo child = llvm::sys::ExecuteNoWait(
      program, argv, std::nullopt, redirects, 0, &message, &couldNotRun);
  if (couldNotRun || child.Pid == llvm::sys::ProcessInfo::InvalidPid)
    return makeError("cannot run ", program, ": ", message);
  ExitCleanup killOnExit = ExitCleanup::killProcess(child.Pid);
  int rc = llvm::sys::Wait(child, kToolTimeoutSeconds, &message).ReturnCode;
  killOnExit.release();
  if (rc == -2)
    return makeError(program, " did not finish within ", kToolTimeoutSeconds,
                     " s or crashed while writing ", output, ": ", message);
  if (rc < 0)
    return makeError("waiting for ", program, " writing ", output,
                     " failed: ", message);
  if (rc != 0)
    return makeError(program, " failed (exit status ", rc, ") writing ", output,
                     ":\n", toolOutput(log));
  return Status::ok();
}

std::optional<std::string> firstExisting(std::vector<std::string> paths,
                                         llvm::StringRef name) {
  for (const std::string &p : paths)
    if (!p.empty() && llvm::sys::fs::can_execute(p))
      return p;
  if (auto found = llvm::sys::findProgramByName(name))
    return *found;
  return std::nullopt;
}

} // namespace

std::optional<std::string> findPtxas() {
  const char *env = std::getenv("QTENSOR_PTXAS");
  return firstExisting({env ? env : "", "/usr/local/cuda/bin/ptxas"}, "ptxas");
}

Status assembleCubin(const std::string &ptxas, const std::string &arch,
                     const std::string &ptxPath, const std::string &cubinPath) {
  return runTool(ptxas, {"-arch=" + arch, "-O3", ptxPath, "-o", cubinPath},
                 cubinPath);
}

Status emitHostObject(mlir::ModuleOp module, const std::string &objectPath,
                      HostCpuLevel cpu) {
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  llvm::LLVMContext llvmContext;
  std::unique_ptr<llvm::Module> llvmModule =
      mlir::translateModuleToLLVMIR(module, llvmContext, "qtensor_kernels");
  if (!llvmModule)
    return makeError("the host kernels do not translate to LLVM IR");

  llvm::Triple triple(llvm::sys::getProcessTriple());
  std::string error;
  const llvm::Target *target =
      llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target)
    return makeError("no LLVM target for ", triple.str(), ": ", error);
  if (cpu != HostCpuLevel::Generic && !triple.isX86())
    return makeError("CPU level ", toString(cpu), " is for x86-64, not ",
                     triple.str(), " (use --host-cpu generic)");
  // The recorded level, nothing of the compiling machine's own CPU.
  // At x86-64-v4, 512-bit vectors: LLVM's default for the level prefers 256
  // bits, which would split the kernels' wide vectors back into AVX2 halves.
  std::string features = llvmCpuFeatures(cpu);
  if (atLeast(cpu, HostCpuLevel::X86_64_V4))
    features += std::string(features.empty() ? "" : ",") + "-prefer-256-bit";
  std::unique_ptr<llvm::TargetMachine> machine(target->createTargetMachine(
      triple, llvmCpuName(cpu), features, llvm::TargetOptions(),
      llvm::Reloc::PIC_, std::nullopt, llvm::CodeGenOptLevel::Aggressive));
  if (!machine)
    return makeError("cannot create an LLVM target machine for ", triple.str());
  llvmModule->setTargetTriple(triple);
  llvmModule->setDataLayout(machine->createDataLayout());
  if (llvm::Error e = mlir::makeOptimizingTransformer(3, 0, machine.get())(
          llvmModule.get()))
    return makeError("optimizing the host kernels: ",
                     llvm::toString(std::move(e)));

  std::error_code ec;
  llvm::raw_fd_ostream out(objectPath, ec, llvm::sys::fs::OF_None);
  if (ec)
    return makeError("cannot write ", objectPath, ": ", ec.message());
  llvm::legacy::PassManager codegen;
  if (machine->addPassesToEmitFile(codegen, out, nullptr,
                                   llvm::CodeGenFileType::ObjectFile))
    return makeError("LLVM cannot emit an object file for ", triple.str());
  codegen.run(*llvmModule);
  out.close();
  if (out.has_error())
    return makeError("cannot write ", objectPath, ": ", out.error().message());
  return Status::ok();
}

Status linkSharedObject(const std::string &objectPath,
                        const std::string &sharedObjectPath) {
  if (auto clang = firstExisting({"/usr/lib/llvm-22/bin/clang"}, "clang-22"))
    // compiler-rt's builtins (linked statically) provide the soft-float
    // helpers LLVM may call, e.g. __truncsfbf2, which libgcc 12 lacks.
    return runTool(
        *clang,
        {"-shared", "--rtlib=compiler-rt", "-o", sharedObjectPath, objectPath},
        sharedObjectPath);
  if (auto lld = firstExisting({"/usr/lib/llvm-22/bin/ld.lld"}, "ld.lld"))
    return runTool(*lld, {"-shared", "-o", sharedObjectPath, objectPath},
                   sharedObjectPath);
  return makeError("no linker for ", sharedObjectPath,
                   ": neither clang-22 nor ld.lld was found");
}

Expected<std::set<std::string>>
exportedFunctions(const std::string &sharedObjectPath) {
  auto file = llvm::object::ObjectFile::createObjectFile(sharedObjectPath);
  if (!file)
    return makeError("cannot read ", sharedObjectPath, ": ",
                     llvm::toString(file.takeError()));
  auto *elf =
      llvm::dyn_cast<llvm::object::ELFObjectFileBase>(file->getBinary());
  if (!elf)
    return makeError(sharedObjectPath, " is not an ELF shared object");
  std::set<std::string> names;
  for (const llvm::object::ELFSymbolRef &symbol :
       elf->getDynamicSymbolIterators()) {
    auto flags = symbol.getFlags();
    auto type = symbol.getType();
    auto name = symbol.getName();
    if (!flags || !type || !name) {
      llvm::consumeError(flags.takeError());
      llvm::consumeError(type.takeError());
      llvm::consumeError(name.takeError());
      continue;
    }
    if ((*flags & llvm::object::SymbolRef::SF_Undefined) ||
        !(*flags & llvm::object::SymbolRef::SF_Global) ||
        *type != llvm::object::SymbolRef::ST_Function)
      continue;
    names.insert(name->str());
  }
  return names;
}

Expected<std::vector<uint8_t>> readFileBytes(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return makeError("cannot read ", path);
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)),
                             std::istreambuf_iterator<char>());
  if (in.bad())
    return makeError("cannot read ", path);
  return bytes;
}

} // namespace qtensor::target
