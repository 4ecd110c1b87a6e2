" Brook (.br, .brh) and LOOM (.loom) files.
autocmd BufRead,BufNewFile *.br,*.brh setfiletype brook
autocmd BufRead,BufNewFile *.loom setfiletype loom
