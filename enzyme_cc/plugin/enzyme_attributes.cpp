// enzyme-cc's clang plugin: Enzyme's source attributes, lowered to annotations the link step reads.
//
// Every attribute is accepted in four spellings: GNU __attribute__((enzyme_X)), C23/C++11
// [[enzyme_X]], and the scoped [[enzyme::X]]. Each becomes an `annotate` attribute on the
// declaration, which clang carries through template instantiation and redeclarations and emits
// into @llvm.global.annotations for the entities a translation unit defines. A declaration that
// is used here but defined elsewhere (an external library function, say) gets, at the end of the
// translation unit, an internal `used` registration variable holding its address and annotated
// "enzyme_cc_register:<annotation>", so the link step learns of it too.
//
// Attributes that enzyme-cc cannot honour yet, and unknown enzyme_* attributes (which plain clang
// would only warn about and drop, giving a silently wrong derivative), are compile errors.
//
// Built once per machine by enzyme_cc/plugin.py; clang loads it with -fplugin.

#include "clang/AST/ASTConsumer.h"
#include "clang/AST/ASTContext.h"
#include "clang/AST/Attr.h"
#include "clang/AST/Decl.h"
#include "clang/AST/DeclCXX.h"
#include "clang/AST/Expr.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/Basic/DiagnosticSema.h"
#include "clang/Frontend/CompilerInstance.h"
#include "clang/Frontend/FrontendPluginRegistry.h"
#include "clang/Lex/Pragma.h"
#include "clang/Lex/Preprocessor.h"
#include "clang/Sema/ParsedAttr.h"
#include "clang/Sema/Sema.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringSwitch.h"

#include <string>
#include <vector>

using namespace clang;

namespace {

// Declarations that carry one of our annotations; checked at the end of the translation unit.
std::vector<std::pair<ValueDecl *, std::string>> Marked;

void report(Sema &S, SourceLocation Loc, const std::string &Text) {
  S.Diag(Loc, S.getDiagnostics().getCustomDiagID(DiagnosticsEngine::Error, "%0")) << Text;
}

std::string displayName(const ParsedAttr &A) {
  std::string scope = A.getScopeName() ? A.getScopeName()->getName().str() + "::" : "";
  return scope + A.getAttrName()->getName().str();
}

// [[shadow(x)]]: the unscoped alias that only exists for clang's argument parsing (above).
bool isUnscopedAlias(const ParsedAttr &A) {
  return !A.getScopeName() && !A.getAttrName()->getName().starts_with("enzyme_");
}

bool isGlobal(const Decl *D) {
  auto *V = dyn_cast<VarDecl>(D);
  return V && V->hasGlobalStorage() && !isa<ParmVarDecl>(V);
}

// enzyme_shadow's argument: a global variable, written as a plain name (which clang hands over
// as an identifier) or as an expression.
Expr *shadowArgument(Sema &S, const ParsedAttr &A) {
  if (A.getNumArgs() != 1)
    return nullptr;
  if (A.isArgExpr(0))
    return A.getArgAsExpr(0);
  IdentifierLoc *Id = A.getArgAsIdent(0);
  auto *V = dyn_cast_or_null<VarDecl>(S.LookupSingleName(
      S.getCurScope(), Id->getIdentifierInfo(), Id->getLoc(), Sema::LookupOrdinaryName));
  if (!V || !V->hasGlobalStorage())
    return nullptr;
  return DeclRefExpr::Create(S.getASTContext(), NestedNameSpecifierLoc(), SourceLocation(), V,
                             false, Id->getLoc(), V->getType(), VK_LValue);
}

// Loop checkpointing, as Enzyme lowers it: the attribute becomes a call
// __enzyme_set_checkpointing(schedule, budget) at the top of the loop body, which the link step
// (enzyme_cc/ad/api/loop_checkpoint.py) finds after optimization and turns the loop around it into a
// checkpointed loop. Schedules are Enzyme's tags (<enzyme/checkpoint.h>); the budget is all ones
// when not given (the schedule's default).
int64_t scheduleTag(StringRef Name) {
  return llvm::StringSwitch<int64_t>(Name)
      .Case("none", 0)
      .Case("periodic", 1)
      .Case("regular", 1)
      .Case("revolve", 2)
      .Case("store_all", 3)
      .Case("binomial", 4)
      .Default(-1);
}

// One declaration per translation unit, void(unsigned long, unsigned long), at file scope so
// that a loop in a template is instantiated with a call of the same function.
FunctionDecl *setCheckpointingDecl(ASTContext &C) {
  static ASTContext *Of = nullptr;
  static FunctionDecl *F = nullptr;
  if (Of == &C)
    return F;
  QualType U64 = C.UnsignedLongTy;
  FunctionProtoType::ExtProtoInfo EPI;
  EPI.ExceptionSpec.Type = EST_BasicNoexcept;      // a call, never an invoke, in C++
  QualType FT = C.getFunctionType(C.VoidTy, {U64, U64}, EPI);
  DeclContext *TU = C.getTranslationUnitDecl();
  F = FunctionDecl::Create(C, TU, SourceLocation(), SourceLocation(),
                           DeclarationName(&C.Idents.get("__enzyme_set_checkpointing")), FT,
                           C.getTrivialTypeSourceInfo(FT), SC_Extern);
  SmallVector<ParmVarDecl *, 2> Params;
  for (int k = 0; k < 2; ++k)
    Params.push_back(ParmVarDecl::Create(C, F, SourceLocation(), SourceLocation(), nullptr, U64,
                                         C.getTrivialTypeSourceInfo(U64), SC_None, nullptr));
  F->setParams(Params);
  F->setImplicit();
  F->addAttr(NoThrowAttr::CreateImplicit(C));
  Of = &C;
  return F;
}

ParsedAttrInfo::AttrHandling lowerCheckpointLoop(Sema &S, ForStmt *For, const ParsedAttr &A,
                                                 Attr *&Result) {
  ASTContext &C = S.getASTContext();
  std::string Name = displayName(A);
  if (A.getNumArgs() > 2) {
    report(S, A.getLoc(), "'" + Name + "' takes at most two arguments: a schedule name "
                                       "(\"revolve\", \"binomial\", \"periodic\", \"store_all\" "
                                       "or \"none\") and an integer budget");
    return ParsedAttrInfo::AttributeNotApplied;
  }
  int64_t Mode = 1;          // Enzyme's default: periodic
  if (A.getNumArgs() >= 1) {
    auto *Lit = A.isArgExpr(0) ? dyn_cast<StringLiteral>(A.getArgAsExpr(0)->IgnoreParenCasts())
                               : nullptr;
    Mode = Lit ? scheduleTag(Lit->getString()) : -1;
    if (Mode < 0) {
      report(S, A.getLoc(), "'" + Name + "': the schedule must be one of \"revolve\", "
                                         "\"binomial\", \"periodic\" (or \"regular\"), "
                                         "\"store_all\", \"none\"");
      return ParsedAttrInfo::AttributeNotApplied;
    }
  }
  uint64_t Budget = ~uint64_t(0);
  if (A.getNumArgs() == 2) {
    Expr::EvalResult R;
    Expr *E = A.isArgExpr(1) ? A.getArgAsExpr(1) : nullptr;
    if (!E || E->isValueDependent() || !E->EvaluateAsInt(R, C) ||
        R.Val.getInt().isNegative()) {
      report(S, A.getLoc(), "'" + Name + "': the budget (snapshots, or segments for "
                                         "\"periodic\") must be a non-negative integer constant");
      return ParsedAttrInfo::AttributeNotApplied;
    }
    Budget = R.Val.getInt().getZExtValue();
  }
  FunctionDecl *F = setCheckpointingDecl(C);
  SourceLocation Loc = A.getLoc();
  auto *Ref = DeclRefExpr::Create(C, NestedNameSpecifierLoc(), SourceLocation(), F, false, Loc,
                                  F->getType(), VK_LValue);
  Expr *Callee = ImplicitCastExpr::Create(C, C.getPointerType(F->getType()),
                                          CK_FunctionToPointerDecay, Ref, nullptr, VK_PRValue,
                                          FPOptionsOverride());
  Expr *Args[] = {IntegerLiteral::Create(C, llvm::APInt(64, (uint64_t)Mode), C.UnsignedLongTy, Loc),
                  IntegerLiteral::Create(C, llvm::APInt(64, Budget), C.UnsignedLongTy, Loc)};
  Stmt *Call = CallExpr::Create(C, Callee, Args, C.VoidTy, VK_PRValue, Loc, FPOptionsOverride());
  Stmt *Body[] = {Call, For->getBody()};
  For->setBody(CompoundStmt::Create(C, Body, FPOptionsOverride(), Loc, Loc));
  // One header run per step: LLVM must not unroll the loop before the link step outlines it.
  Result = LoopHintAttr::CreateImplicit(C, LoopHintAttr::Unroll, LoopHintAttr::Disable, nullptr,
                                        A.getRange());
  return ParsedAttrInfo::AttributeApplied;
}

// One attribute: its enzyme_ name, what it applies to, and how it is lowered.
struct EnzymeAttr : public ParsedAttrInfo {
  enum Target { Functions, FunctionsAndGlobals, Globals, ForLoops };
  std::string Name;            // enzyme_inactive
  Target Applies;
  std::string FnAnnotation;    // annotation on a function ("" = not allowed on functions)
  std::string VarAnnotation;   // annotation on a global
  const char *Unsupported;     // non-null: a compile error saying what is missing
  std::vector<std::string> Storage;
  std::vector<Spelling> SpellingList;

  EnzymeAttr(const char *name, Target applies, const char *fn, const char *var, unsigned args,
             const char *unsupported = nullptr)
      : Name(name), Applies(applies), FnAnnotation(fn), VarAnnotation(var),
        Unsupported(unsupported) {
    OptArgs = args;
    IsStmt = applies == ForLoops;
    std::string bare = Name.substr(strlen("enzyme_"));
    Storage = {Name, "enzyme::" + bare, bare};
    for (int k = 0; k < 2; ++k) {
      SpellingList.push_back({ParsedAttr::AS_CXX11, Storage[k].c_str()});
      SpellingList.push_back({ParsedAttr::AS_C23, Storage[k].c_str()});
    }
    SpellingList.push_back({ParsedAttr::AS_GNU, Storage[0].c_str()});
    // clang decides whether to parse the arguments of [[enzyme::X(...)]] by asking plugins for
    // the unscoped name X, so attributes with arguments also answer to it (and refuse it when
    // it is written without the scope: see isUnscopedAlias).
    if (args) {
      SpellingList.push_back({ParsedAttr::AS_CXX11, Storage[2].c_str()});
      SpellingList.push_back({ParsedAttr::AS_C23, Storage[2].c_str()});
    }
    Spellings = SpellingList;
  }

  bool diagAppertainsToDecl(Sema &S, const ParsedAttr &A, const Decl *D) const override {
    if (isUnscopedAlias(A)) {      // not ours: what clang says of any unknown attribute
      S.Diag(A.getLoc(), diag::warn_unknown_attribute_ignored) << A << A.getRange();
      return false;
    }
    bool fn = isa<FunctionDecl>(D), global = isGlobal(D);
    if ((Applies == Functions && fn) || (Applies == Globals && global) ||
        (Applies == FunctionsAndGlobals && (fn || global)))
      return true;
    const char *what = Applies == Functions ? "functions"
                       : Applies == Globals ? "global variables"
                       : Applies == ForLoops ? "for statements"
                                             : "functions and global variables";
    report(S, A.getLoc(), "'" + displayName(A) + "' applies to " + what + " only");
    return false;
  }

  bool diagAppertainsToStmt(Sema &S, const ParsedAttr &A, const Stmt *St) const override {
    if (isUnscopedAlias(A)) {
      S.Diag(A.getLoc(), diag::warn_unknown_attribute_ignored) << A << A.getRange();
      return false;
    }
    if (Applies == ForLoops && isa<ForStmt>(St))
      return true;
    report(S, A.getLoc(), "'" + displayName(A) + "' applies to " +
                              (Applies == ForLoops ? "for statements only"
                                                   : "declarations, not statements"));
    return false;
  }

  bool checkUnsupported(Sema &S, const ParsedAttr &A) const {
    if (!Unsupported)
      return false;
    report(S, A.getLoc(), "'" + displayName(A) + "' is not supported by enzyme-cc yet (" +
                              Unsupported + ")");
    return true;
  }

  AttrHandling handleStmtAttribute(Sema &S, Stmt *St, const ParsedAttr &A,
                                   class Attr *&Result) const override {
    if (checkUnsupported(S, A) || !isa<ForStmt>(St))
      return AttributeNotApplied;
    return lowerCheckpointLoop(S, cast<ForStmt>(St), A, Result);
  }

  // The annotation text for this use, or "" after reporting an error.
  std::string annotation(Sema &S, Decl *D, const ParsedAttr &A) const {
    std::string text = isa<FunctionDecl>(D) ? FnAnnotation : VarAnnotation;
    if (Name == "enzyme_function_like") {
      auto *Lit = A.getNumArgs() == 1 && A.isArgExpr(0)
                      ? dyn_cast<StringLiteral>(A.getArgAsExpr(0)->IgnoreParenCasts())
                      : nullptr;
      if (!Lit || Lit->getString().empty()) {
        report(S, A.getLoc(), "'" + displayName(A) +
                                  "' takes one string argument, the name of a library "
                                  "function, e.g. enzyme_function_like(\"log1p\")");
        return "";
      }
      return text + "=" + Lit->getString().str();
    }
    if (Name != "enzyme_shadow" && A.getNumArgs() != 0) {
      report(S, A.getLoc(), "'" + displayName(A) + "' takes no arguments");
      return "";
    }
    return text;
  }

  AttrHandling handleDeclAttribute(Sema &S, Decl *D, const ParsedAttr &A) const override {
    if (checkUnsupported(S, A))
      return AttributeNotApplied;
    std::string text = annotation(S, D, A);
    if (text.empty())
      return AttributeNotApplied;
    ASTContext &C = S.getASTContext();
    if (Name == "enzyme_shadow") {
      // The shadow global's address is the annotation's argument.
      Expr *Arg = shadowArgument(S, A);
      ExprResult Addr =
          Arg ? S.CreateBuiltinUnaryOp(A.getLoc(), UO_AddrOf, Arg) : ExprResult(true);
      if (!Arg || Addr.isInvalid()) {
        report(S, A.getLoc(), "'" + displayName(A) +
                                  "' takes one argument, the global variable that holds "
                                  "the shadow, e.g. enzyme_shadow(x_shadow)");
        return AttributeNotApplied;
      }
      Expr *Args[] = {Addr.get()};
      if (!S.ConstantFoldAttrArgs(A, Args))    // codegen emits folded constants only
        return AttributeNotApplied;
      D->addAttr(AnnotateAttr::Create(C, text, Args, 1, A.getRange()));
      return AttributeApplied;
    }
    D->addAttr(AnnotateAttr::Create(C, text, nullptr, 0, A.getRange()));
    if (auto *V = dyn_cast<ValueDecl>(D))
      Marked.push_back({V, text});
    return AttributeApplied;
  }
};

#define ENZYME_ATTR(Id, ...)                                                                  \
  struct Id : EnzymeAttr {                                                                    \
    Id() : EnzymeAttr(__VA_ARGS__) {}                                                         \
  };                                                                                          \
  static ParsedAttrInfoRegistry::Add<Id> Reg##Id(#Id, "")

// Lowered as Enzyme's plugin lowers them; the link step (enzyme_cc/ad/api/registrations.py) reads
// every annotation named here.
ENZYME_ATTR(Inactive, "enzyme_inactive", EnzymeAttr::FunctionsAndGlobals, "enzyme_inactivefn",
            "enzyme_inactive", 1);
ENZYME_ATTR(InactiveNoblock, "enzyme_inactive_noblock", EnzymeAttr::FunctionsAndGlobals,
            "enzyme_inactivenoblockfn", "enzyme_inactive", 1);
ENZYME_ATTR(FunctionLike, "enzyme_function_like", EnzymeAttr::Functions,
            "enzyme_function_like", "", 1);
ENZYME_ATTR(Shadow, "enzyme_shadow", EnzymeAttr::Globals, "", "enzyme_shadow", 1);
// Hints about memory and analysis: they change no derivative value.
ENZYME_ATTR(NoFree, "enzyme_nofree", EnzymeAttr::FunctionsAndGlobals, "enzyme_nofree",
            "enzyme_nofree", 1);
ENZYME_ATTR(ShouldRecompute, "enzyme_shouldrecompute", EnzymeAttr::FunctionsAndGlobals,
            "enzyme_shouldrecompute", "enzyme_shouldrecompute", 1);
ENZYME_ATTR(ElementwiseRead, "enzyme_elementwise_read", EnzymeAttr::Functions,
            "enzyme_elementwise_read", "", 1);
ENZYME_ATTR(NoTypeAnalysis, "enzyme_notypeanalysis", EnzymeAttr::FunctionsAndGlobals,
            "enzyme_ta_norecur", "enzyme_ta_norecur", 1);
// Marks the function a __enzyme_todense store function calls to record an entry (Enzyme's
// automatic loop sparsification looks for it; enzyme-cc runs such loops densely).
ENZYME_ATTR(SparseAccumulate, "enzyme_sparse_accumulate", EnzymeAttr::Functions,
            "enzyme_sparse_accumulate", "", 1);
// Loop checkpointing (lowerCheckpointLoop); enzyme_checkpointing_enable is Reactant's spelling.
ENZYME_ATTR(Checkpoint, "enzyme_checkpoint", EnzymeAttr::ForLoops, "", "", 2);
ENZYME_ATTR(CheckpointingEnable, "enzyme_checkpointing_enable", EnzymeAttr::ForLoops, "", "", 2);

const char *const KnownNames[] = {
    "enzyme_inactive", "enzyme_inactive_noblock", "enzyme_function_like", "enzyme_shadow",
    "enzyme_nofree", "enzyme_shouldrecompute", "enzyme_elementwise_read",
    "enzyme_notypeanalysis", "enzyme_sparse_accumulate", "enzyme_checkpoint",
    "enzyme_checkpointing_enable"};

// Unknown enzyme_* attributes: clang reports them as "unknown attribute ignored" warnings, which
// -w or -Wno-unknown-attributes would hide. The plugin maps that warning to a remark (which
// neither silences), turns the enzyme ones into errors, and passes the others on as the user's
// options would have shown them.
class UnknownEnzymeAttrs : public DiagnosticConsumer {
  DiagnosticConsumer *Next;
  std::unique_ptr<DiagnosticConsumer> Owned;
  DiagnosticsEngine::Level UserLevel;

public:
  UnknownEnzymeAttrs(DiagnosticConsumer *next, std::unique_ptr<DiagnosticConsumer> owned,
                     DiagnosticsEngine::Level userLevel)
      : Next(next), Owned(std::move(owned)), UserLevel(userLevel) {
    // clang's exit status is the client's error count: keep the errors reported before the
    // action (an unknown warning option under -Werror), or the failed compile exits 0
    NumErrors = next->getNumErrors();
    NumWarnings = next->getNumWarnings();
  }

  void BeginSourceFile(const LangOptions &LO, const Preprocessor *PP) override {
    Next->BeginSourceFile(LO, PP);
  }
  void EndSourceFile() override { Next->EndSourceFile(); }
  void finish() override { Next->finish(); }
  bool IncludeInDiagnosticCounts() const override { return Next->IncludeInDiagnosticCounts(); }

  void HandleDiagnostic(DiagnosticsEngine::Level Level, const Diagnostic &Info) override {
    if (Info.getID() == diag::warn_unknown_attribute_ignored) {
      llvm::SmallString<128> Text;
      Info.FormatDiagnostic(Text);
      bool enzyme = Text.str().contains("'enzyme_") || Text.str().contains("'enzyme::");
      if (!enzyme && UserLevel == DiagnosticsEngine::Ignored)
        return;
      Level = enzyme ? DiagnosticsEngine::Error : UserLevel;
      if (enzyme) {
        std::string Message = Text.str().str();
        size_t Cut = Message.rfind(" ignored");
        if (Cut != std::string::npos)
          Message = Message.substr(0, Cut);
        Message = Message.replace(0, strlen("unknown"), "unknown Enzyme");
        Message += " (enzyme-cc knows:";
        for (const char *N : KnownNames)
          Message += std::string(" ") + N;
        Message += ")";
        auto *Engine = const_cast<DiagnosticsEngine *>(Info.getDiags());
        unsigned Id = Engine->getCustomDiagID(DiagnosticsEngine::Error, "%0");
        DiagnosticStorage NoArgs;
        Diagnostic Rewritten(Engine, Info.getLocation(), Id, NoArgs, Message);
        DiagnosticConsumer::HandleDiagnostic(Level, Rewritten);
        Next->HandleDiagnostic(Level, Rewritten);
        return;
      }
    }
    DiagnosticConsumer::HandleDiagnostic(Level, Info);
    Next->HandleDiagnostic(Level, Info);
  }
};

// A struct or complex number of more than one register passed by value to __enzyme_fwddiff: the
// ABI splits it into its fields, which the marker then reads as (value, tangent) pairs in the
// wrong order (p.a, p.b, dp.a, dp.b taken as a, da, b, db): a silently wrong tangent.
class ForwardStructArgs : public RecursiveASTVisitor<ForwardStructArgs> {
  ASTContext &C;
  DiagnosticsEngine &D;

public:
  ForwardStructArgs(ASTContext &c, DiagnosticsEngine &d) : C(c), D(d) {}
  bool VisitCallExpr(CallExpr *E) {
    auto *F = E->getDirectCallee();
    if (!F || !F->getIdentifier() || !F->getName().starts_with("__enzyme_fwddiff"))
      return true;
    for (unsigned I = 1; I < E->getNumArgs(); ++I) {
      QualType T = E->getArg(I)->getType();
      if (T->isDependentType() || !(T->isRecordType() || T->isAnyComplexType()) ||
          T->isIncompleteType() || C.getTypeSize(T) <= 64)
        continue;
      unsigned Id = D.getCustomDiagID(
          DiagnosticsEngine::Error,
          "%0 of type %1 passed by value to %2: the ABI passes its fields as separate values "
          "(or in memory), which forward mode cannot pair with their tangents; pass each field "
          "followed by its tangent, or differentiate a wrapper taking it by address (enzyme_dup, "
          "its tangent by address too; in C++ enzyme::Duplicated<T>(v, dv) does this)");
      D.Report(E->getArg(I)->getExprLoc(), Id)
          << (T->isAnyComplexType() ? "a complex number" : "a struct") << T << F->getName();
      break;           // (its tangent, the next argument, would say the same)
    }
    return true;
  }
};

class Consumer : public ASTConsumer {
  CompilerInstance &CI;
  unsigned Count = 0;

public:
  explicit Consumer(CompilerInstance &ci) : CI(ci) {}

  // The derivative markers `nomerge` before code generation sees their calls (as the link
  // step's lto/text_passes.py markers_nomerge does): with -flto the object is IR optimized
  // here, and SimplifyCFG sank two marker calls in the arms of a branch (a C++ invoke each)
  // into one whose function and activity markers are phis, which no marker can be read from.
  bool HandleTopLevelDecl(DeclGroupRef G) override {
    for (Decl *D : G)
      markNoMerge(D);
    return true;
  }

  // Registration variables for marked declarations used here but defined elsewhere.
  void HandleTranslationUnit(ASTContext &C) override {
    if (CI.getDiagnostics().hasErrorOccurred())
      return;
    ForwardStructArgs(C, CI.getDiagnostics()).TraverseDecl(C.getTranslationUnitDecl());
    if (CI.getDiagnostics().hasErrorOccurred())
      return;
    std::vector<std::pair<ValueDecl *, std::string>> Todo;
    Todo.swap(Marked);
    for (auto &[D, Text] : Todo) {
      if (!definedElsewhere(D))
        continue;
      if (auto *M = dyn_cast<CXXMethodDecl>(D); M && M->isInstance())
        continue;      // no plain address; its defining translation unit sees the attribute
      register_(C, D, Text);
    }
  }

private:
  static bool isDerivativeMarker(StringRef N) {
    for (StringRef M : {"__enzyme_autodiff", "__enzyme_fwddiff", "__enzyme_augmentfwd",
                        "__enzyme_reverse", "__enzyme_augmentsize", "__enzyme_error_estimate"})
      if (N.starts_with(M))
        return true;
    return false;
  }

  static void markNoMerge(Decl *D) {
    if (auto *L = dyn_cast<LinkageSpecDecl>(D)) {         // extern "C" { ... }
      for (Decl *Inner : L->decls())
        markNoMerge(Inner);
      return;
    }
    if (auto *T = dyn_cast<FunctionTemplateDecl>(D))
      D = T->getTemplatedDecl();
    auto *F = dyn_cast<FunctionDecl>(D);
    if (F && F->getIdentifier() && isDerivativeMarker(F->getName()) && !F->hasAttr<NoMergeAttr>())
      F->addAttr(NoMergeAttr::CreateImplicit(F->getASTContext()));
  }

  static bool definedElsewhere(ValueDecl *D) {
    if (!D->isUsed() && !D->isReferenced())
      return false;    // never used: no address to take (it may be defined nowhere)
    if (auto *F = dyn_cast<FunctionDecl>(D))
      return !F->isDefined() && !F->isDependentContext();
    auto *V = cast<VarDecl>(D);
    return !V->getDefinition() && !V->getDeclContext()->isDependentContext();
  }

  void register_(ASTContext &C, ValueDecl *D, const std::string &Text) {
    SourceLocation Loc = D->getLocation();
    QualType T = D->getType();
    QualType PT = C.getPointerType(T);
    auto *Ref = DeclRefExpr::Create(C, NestedNameSpecifierLoc(), SourceLocation(), D, false, Loc,
                                    T, VK_LValue);
    Expr *Init = isa<FunctionDecl>(D)
                     ? static_cast<Expr *>(ImplicitCastExpr::Create(
                           C, PT, CK_FunctionToPointerDecay, Ref, nullptr, VK_PRValue,
                           FPOptionsOverride()))
                     : UnaryOperator::Create(C, Ref, UO_AddrOf, PT, VK_PRValue, OK_Ordinary,
                                             Loc, false, FPOptionsOverride());
    std::string Name = "__enzyme_cc_register_" + std::to_string(Count++);
    auto *V = VarDecl::Create(C, C.getTranslationUnitDecl(), Loc, Loc, &C.Idents.get(Name), PT,
                              C.getTrivialTypeSourceInfo(PT), SC_Static);
    V->setInit(Init);
    V->addAttr(UsedAttr::CreateImplicit(C));
    V->addAttr(AnnotateAttr::CreateImplicit(C, "enzyme_cc_register:" + Text, nullptr, 0));
    C.getTranslationUnitDecl()->addDecl(V);
    CI.getASTConsumer().HandleTopLevelDecl(DeclGroupRef(V));
  }
};

class Action : public PluginASTAction {
protected:
  std::unique_ptr<ASTConsumer> CreateASTConsumer(CompilerInstance &CI, StringRef) override {
    DiagnosticsEngine &D = CI.getDiagnostics();
    DiagnosticsEngine::Level User =
        D.getDiagnosticLevel(diag::warn_unknown_attribute_ignored, SourceLocation());
    D.setSeverity(diag::warn_unknown_attribute_ignored, diag::Severity::Remark,
                  SourceLocation());
    DiagnosticConsumer *Next = D.getClient();
    std::unique_ptr<DiagnosticConsumer> Owned = D.takeClient();
    D.setClient(new UnknownEnzymeAttrs(Next, std::move(Owned), User), true);
    return std::make_unique<Consumer>(CI);
  }
  bool ParseArgs(const CompilerInstance &, const std::vector<std::string> &) override {
    return true;
  }
  ActionType getActionType() override { return AddBeforeMainAction; }
};

// `#pragma enzyme checkpoint(...)` before a loop (for C without C23 attributes), as Enzyme reads
// it: the tokens __attribute__((enzyme_checkpoint(...))) in its place, which apply to the for
// statement that follows. Other directives would be ignored in silence by clang: errors.
struct EnzymePragma : public PragmaHandler {
  EnzymePragma() : PragmaHandler("enzyme") {}
  void HandlePragma(Preprocessor &PP, PragmaIntroducer, Token &First) override {
    Token Tok;
    PP.Lex(Tok);
    std::string What = Tok.is(tok::identifier) ? Tok.getIdentifierInfo()->getName().str() : "";
    if (What != "checkpoint") {
      unsigned Id = PP.getDiagnostics().getCustomDiagID(
          DiagnosticsEngine::Error,
          "unknown '#pragma enzyme %0' (enzyme-cc knows '#pragma enzyme checkpoint')");
      PP.Diag(First.getLocation(), Id) << What;
      PP.DiscardUntilEndOfDirective();
      return;
    }
    SourceLocation Loc = Tok.getLocation();
    std::vector<Token> Args;
    for (PP.Lex(Tok); Tok.isNot(tok::eod); PP.Lex(Tok))
      Args.push_back(Tok);
    auto make = [&](tok::TokenKind Kind, IdentifierInfo *II = nullptr) {
      Token T;
      T.startToken();
      T.setKind(Kind);
      T.setLocation(Loc);
      T.setLength(0);
      if (II)
        T.setIdentifierInfo(II);
      return T;
    };
    std::vector<Token> Toks = {make(tok::kw___attribute), make(tok::l_paren),
                               make(tok::l_paren),
                               make(tok::identifier, PP.getIdentifierInfo("enzyme_checkpoint"))};
    Toks.insert(Toks.end(), Args.begin(), Args.end());
    Toks.push_back(make(tok::r_paren));
    Toks.push_back(make(tok::r_paren));
    auto Buffer = std::make_unique<Token[]>(Toks.size());
    std::copy(Toks.begin(), Toks.end(), Buffer.get());
    PP.EnterTokenStream(std::move(Buffer), Toks.size(), /*DisableMacroExpansion=*/false,
                        /*IsReinject=*/false);
  }
};

static PragmaHandlerRegistry::Add<EnzymePragma> RegPragma("enzyme", "Enzyme's loop directives");

static FrontendPluginRegistry::Add<Action> RegAction("enzyme-cc", "Enzyme's source attributes");

} // namespace
