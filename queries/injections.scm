;; extends
; Injections for Fortran comments (Neovim's built-in tree-sitter,
; tree-sitter-fortran 0.6). Ordinary comments get the `comment` language
; (TODO:, NOTE:, URLs; used when its parser is installed, ignored
; otherwise); HPF directives (`!HPF$`, `CHPF$`, `*HPF$`, any case) do not:
; they are code, highlighted whole by highlights.scm and by the server's
; semantic tokens. The directive text itself gets no injection: Fortran's
; grammar cannot parse `ALIGN B(I) WITH A(I+1)` and there is no HPF
; grammar. Installed for Neovim as
; editors/nvim/after/queries/fortran/injections.scm (a copy that
; tests/nvim/run.sh checks identical).
((comment) @injection.content
  (#not-match? @injection.content "^[!cC*][hH][pP][fF]\\$")
  (#set! injection.language "comment"))
