" Vim syntax for LOOM (seed 004): indentation-structured kernels with parallel operators.
if exists("b:current_syntax")
  finish
endif
syn keyword loomControl if then else while for break continue return
syn keyword loomDefine kernel func type const import
syn keyword loomSpace local shared global
syn keyword loomType Bool Byte Int32 Int64 UInt32 UInt64 Float32 Float64 Range
syn keyword loomBoolean TRUE FALSE
syn keyword loomFunction block
syn match loomThread "\<\(X_\|Y_\)\=\(B\|BLOCKS\|BLOCKSIZE\|T\|THREADS\)\>"
syn match loomParallel "//\|/\.\|/:\|:/"
syn match loomAssign "<-\|+=\|-=\|\*="
syn match loomSafeIndex "\[\[\|\]\]"
syn match loomNumber "\<\d\+\(\.\d*\)\=\([eE][+-]\=\d\+\)\=\>"
syn match loomComment "--.*$"
hi def link loomControl Conditional
hi def link loomDefine Keyword
hi def link loomSpace StorageClass
hi def link loomType Type
hi def link loomBoolean Boolean
hi def link loomFunction Function
hi def link loomThread Identifier
hi def link loomParallel Operator
hi def link loomAssign Operator
hi def link loomSafeIndex Delimiter
hi def link loomNumber Number
hi def link loomComment Comment
let b:current_syntax = "loom"
