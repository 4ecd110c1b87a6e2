" Vim syntax for Brook: C++ plus streams, kernels and reductions.
if exists("b:current_syntax")
  finish
endif
runtime! syntax/cpp.vim
unlet! b:current_syntax
syn keyword brookKernel kernel reduce
syn keyword brookQualifier out iter vout shared
syn keyword brookIntrinsic indexof instance instanceInGroup syncGroup push
syn keyword brookStreamOp streamRead streamWrite streamScatterOp streamGatherOp streamSwap streamPrint
syn match brookVector "\<\(float\|double\|int\|uint\|char\|uchar\|short\|ushort\|long\|ulong\|half\)[234]\>"
syn match brookStreamShape "<\s*>"
hi def link brookKernel StorageClass
hi def link brookQualifier StorageClass
hi def link brookIntrinsic Function
hi def link brookStreamOp Function
hi def link brookVector Type
hi def link brookStreamShape Special
let b:current_syntax = "brook"
