-- hpf.nvim: Neovim client for hpf-ls, the language server for Fortran with
-- High Performance Fortran directives.
--
--   require("hpf").setup{
--     cmd = { "hpf-ls" },                 -- the server (no arguments: LSP over stdio)
--     settings = { processors = 4 },      -- the `hpf` section of README.md
--     inlay_hints = true,                 -- transfer patterns after loops and references
--   }
--
-- Needs Neovim 0.10 or newer.

local M = {}

--- The server's name, as clients and `:checkhealth vim.lsp` show it.
M.name = "hpf-ls"

--- The commands the server executes (workspace/executeCommand).
M.commands = {
  show_transfer_pattern = "hpf.showTransferPattern",
  run = "hpf.run",
  build = "hpf.build",
  generated = "hpf.showGenerated",
  explain_loop = "hpf.explainLoop",
}

local defaults = {
  cmd = { "hpf-ls" },
  settings = {},
  inlay_hints = true,
  -- Refresh the "▶ Run on N processes" lenses above main programs.
  codelens = false,
  filetypes = { "fortran" },
  -- The first directory upwards holding one of these is the workspace root;
  -- without one, the file's own directory.
  root_markers = { "hpf-ls.toml", ".git" },
  -- Start the server for Fortran buffers. Set to false when another plugin
  -- (nvim-lspconfig, vim.lsp.enable) starts it; the commands still work.
  autostart = true,
  -- Called as on_attach(client, bufnr) after the plugin's own setup.
  on_attach = nil,
  -- Extra fields merged into the vim.lsp.start() configuration.
  lsp = {},
}

M.config = vim.deepcopy(defaults)

local has_011 = vim.fn.has("nvim-0.11") == 1

-- Lua's {} encodes as a JSON array: objects must be marked as such.
local list_keys = { extraArgs = true }
local function as_json_object(value, key)
  if type(value) ~= "table" or value == vim.NIL then
    return value
  end
  if next(value) == nil then
    return list_keys[key] and value or vim.empty_dict()
  end
  if vim.islist(value) then
    return value
  end
  local out = {}
  for k, v in pairs(value) do
    out[k] = as_json_object(v, k)
  end
  return out
end

--- The settings as the server reads them: `{ hpf = {...} }`. Accepts either
--- that shape or the contents of the `hpf` section.
function M.normalize_settings(settings)
  settings = settings or {}
  local section = settings.hpf
  if section == nil then
    section = settings
  end
  return { hpf = as_json_object(section) }
end

local function lookup(settings, section)
  if section == nil or section == "" then
    return settings
  end
  local value = settings
  for part in vim.gsplit(section, ".", { plain = true }) do
    if type(value) ~= "table" then
      return nil
    end
    value = value[part]
  end
  return value
end

--- Answers workspace/configuration from the client's settings: one value per
--- item, in order (`vim.NIL` when the section is unknown).
function M.workspace_configuration(_, params, ctx)
  local client = vim.lsp.get_client_by_id(ctx.client_id)
  local settings = (client and (client.settings or (client.config and client.config.settings))) or {}
  local result = {}
  for i, item in ipairs(params and params.items or {}) do
    local value = lookup(settings, item.section)
    if value == nil then
      value = vim.NIL
    end
    result[i] = value
  end
  return result
end

local function root_dir(bufnr, markers)
  local path = vim.api.nvim_buf_get_name(bufnr)
  if path == "" then
    return vim.fn.getcwd()
  end
  local root = vim.fs.root and vim.fs.root(bufnr, markers)
  if not root then
    local found = vim.fs.find(markers, { path = vim.fs.dirname(path), upward = true })[1]
    root = found and vim.fs.dirname(found)
  end
  return root or vim.fs.dirname(path)
end

--- A client configuration for vim.lsp.config() (Neovim 0.11) or as
--- nvim-lspconfig's default_config: cmd, filetypes, root_markers,
--- init_options, settings and the workspace/configuration handler. `opts`
--- overrides setup()'s options (cmd, settings, filetypes, root_markers, lsp).
function M.lsp_config(opts)
  opts = vim.tbl_deep_extend("force", M.config, opts or {})
  local settings = M.normalize_settings(opts.settings)
  return vim.tbl_deep_extend("force", {
    cmd = opts.cmd,
    filetypes = opts.filetypes,
    root_markers = opts.root_markers,
    init_options = settings.hpf,
    settings = settings,
    handlers = {
      ["workspace/configuration"] = M.workspace_configuration,
      ["window/logMessage"] = M.log_message,
    },
  }, opts.lsp or {})
end

-- The hpf-ls client attached to bufnr (started by this plugin or another).
local function is_hpf_client(client)
  if client.name == M.name or client.name == "hpf_ls" then
    return true
  end
  local provider = client.server_capabilities and client.server_capabilities.executeCommandProvider
  return provider ~= nil and vim.tbl_contains(provider.commands or {}, M.commands.show_transfer_pattern)
end

function M.client(bufnr)
  bufnr = bufnr or vim.api.nvim_get_current_buf()
  local get = vim.lsp.get_clients or vim.lsp.get_active_clients
  for _, client in ipairs(get({ bufnr = bufnr })) do
    if is_hpf_client(client) then
      return client
    end
  end
  return nil
end

local function request(client, method, params, handler, bufnr)
  if has_011 then
    return client:request(method, params, handler, bufnr)
  end
  return client.request(method, params, handler, bufnr)
end

-- Output buffers ------------------------------------------------------------

local function split_lines(text)
  return vim.split((text or ""):gsub("\r\n", "\n"):gsub("\n$", ""), "\n", { plain = true })
end

--- The scratch buffer `hpf://{title}`, if it exists.
function M.output_buffer(title)
  local name = "hpf://" .. title
  for _, bufnr in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_valid(bufnr) and vim.api.nvim_buf_get_name(bufnr) == name then
      return bufnr
    end
  end
  return nil
end

--- Shows lines in the scratch buffer `hpf://{title}`, in a split below the
--- current window (reused when it is already on screen), and moves the
--- cursor there unless focus is false. Returns the buffer.
function M.show(title, lines, filetype, focus)
  local bufnr = M.output_buffer(title)
  if not bufnr then
    bufnr = vim.api.nvim_create_buf(false, true)
    vim.api.nvim_buf_set_name(bufnr, "hpf://" .. title)
    vim.bo[bufnr].buftype = "nofile"
    vim.bo[bufnr].bufhidden = "hide"
    vim.bo[bufnr].swapfile = false
    vim.keymap.set("n", "q", "<cmd>close<cr>", { buffer = bufnr, nowait = true, desc = "Close" })
  end
  vim.bo[bufnr].modifiable = true
  vim.api.nvim_buf_set_lines(bufnr, 0, -1, false, lines)
  vim.bo[bufnr].modifiable = false
  vim.bo[bufnr].modified = false
  if filetype and vim.bo[bufnr].filetype ~= filetype then
    vim.bo[bufnr].filetype = filetype
  end
  local previous = vim.api.nvim_get_current_win()
  local win = vim.fn.bufwinid(bufnr)
  if win == -1 then
    vim.cmd("belowright split")
    win = vim.api.nvim_get_current_win()
    vim.api.nvim_win_set_buf(win, bufnr)
    local height = math.min(math.max(#lines, 3), math.floor(vim.o.lines / 2))
    vim.api.nvim_win_set_height(win, height)
  end
  vim.api.nvim_win_set_cursor(win, { 1, 0 })
  if focus == false then
    vim.api.nvim_set_current_win(previous)
  else
    vim.api.nvim_set_current_win(win)
  end
  return bufnr
end

-- What a command answered, as lines: a string (hpf.showGenerated, the
-- transfer table), or hpf.run's {exitCode, stdout, stderr, processes} and
-- hpf.build's {exitCode, notes}.
local function result_lines(result)
  if result == nil or result == vim.NIL then
    return { "(no output)" }
  end
  if type(result) == "string" then
    return split_lines(result)
  end
  if type(result) == "table" then
    local lines = {}
    for _, key in ipairs({ "output", "source", "stdout" }) do
      if type(result[key]) == "string" and result[key] ~= "" then
        vim.list_extend(lines, split_lines(result[key]))
      end
    end
    if type(result.stderr) == "string" and result.stderr ~= "" then
      table.insert(lines, "-- stderr --")
      vim.list_extend(lines, split_lines(result.stderr))
    end
    if type(result.notes) == "table" then
      for _, note in ipairs(result.notes) do
        table.insert(lines, "note: " .. tostring(note))
      end
    end
    local status = result.exitCode
    if status ~= nil and status ~= vim.NIL then
      local on = tonumber(result.processes) and (" on %d processes"):format(result.processes) or ""
      table.insert(lines, ("-- exit code %s%s --"):format(tostring(status), on))
    end
    if #lines > 0 then
      return lines
    end
  end
  return split_lines(vim.inspect(result))
end

local function error_lines(command, err)
  local lines = { ("%s failed (hpf-ls error %s):"):format(command, tostring(err.code or "?")) }
  vim.list_extend(lines, split_lines(err.message or vim.inspect(err)))
  return lines
end

local progress_tokens = 0
-- The output buffer of the hpf.run / hpf.build in progress, per client id:
-- the program's output lines the server logs while it runs go there.
local streaming = {}

-- The source buffer a command is about: the current one, or the buffer an
-- output split was made for.
local function source_buffer()
  local bufnr = vim.api.nvim_get_current_buf()
  local source = vim.b[bufnr].hpf_source
  if source and vim.api.nvim_buf_is_valid(source) then
    return source
  end
  return bufnr
end

--- window/logMessage: while hpf.run runs, the server logs each line of the
--- program's output (LOG for stdout, WARNING for stderr); they are appended
--- to the run's split as they come. Every message also goes to the default
--- handler (the LSP log).
function M.log_message(err, params, ctx)
  local out = streaming[ctx.client_id]
  if out and params and (params.type == vim.lsp.protocol.MessageType.Log or params.type == vim.lsp.protocol.MessageType.Warning) then
    vim.schedule(function()
      if streaming[ctx.client_id] == out and vim.api.nvim_buf_is_valid(out) then
        vim.bo[out].modifiable = true
        vim.api.nvim_buf_set_lines(out, -1, -1, false, split_lines(params.message))
        vim.bo[out].modifiable = false
        vim.b[out].hpf_streamed_lines = (vim.b[out].hpf_streamed_lines or 0) + 1
      end
    end)
  end
  return vim.lsp.handlers["window/logMessage"](err, params, ctx)
end

--- Runs a server command for the buffer and shows its answer (or its error)
--- in the split `hpf://{title}`. opts: bufnr (default: the source buffer),
--- title, filetype of the answer, progress (run/build: a placeholder while
--- it runs, `$/progress`, streamed output), on_done(out_bufnr, err, result).
--- While the command runs, `b:hpf_pending` is true in the output buffer.
function M.execute(command, arguments, opts)
  opts = opts or {}
  local bufnr = opts.bufnr or source_buffer()
  local title = opts.title or command
  local client = M.client(bufnr)
  local function finish(out, err, result)
    vim.b[out].hpf_source = bufnr
    vim.b[out].hpf_pending = false
    if opts.on_done then
      opts.on_done(out, err, result)
    end
  end
  if not client then
    local message = command .. ": hpf-ls is not attached to this buffer."
    vim.notify("hpf.nvim: " .. message, vim.log.levels.WARN)
    finish(M.show(title, { message }), { message = message }, nil)
    return
  end
  local params = { command = command, arguments = arguments }
  if opts.progress then
    -- The server reports `$/progress` on this token (LspProgress, statuslines).
    progress_tokens = progress_tokens + 1
    params.workDoneToken = ("hpf-%s-%d"):format(title, progress_tokens)
    -- A placeholder at once; the cursor stays where it is while it runs.
    local out = M.show(title, { ("%s: running… (the output follows)"):format(command) }, nil, false)
    vim.b[out].hpf_source = bufnr
    vim.b[out].hpf_pending = true
    vim.b[out].hpf_streamed_lines = 0
    streaming[client.id] = out
  end
  request(client, "workspace/executeCommand", params, function(err, result)
    vim.schedule(function()
      if opts.progress then
        streaming[client.id] = nil
      end
      local out
      -- Long commands (run, build) do not take the cursor when they end.
      local focus = not opts.progress
      if err then
        out = M.show(title, error_lines(command, err), nil, focus)
      else
        out = M.show(title, result_lines(result), opts.filetype, focus)
      end
      finish(out, err, result)
    end)
  end, bufnr)
end

local function default_processes()
  local mpi = (M.normalize_settings(M.config.settings).hpf or {}).mpi
  return (type(mpi) == "table" and tonumber(mpi.processes)) or 4
end

--- :HpfRun [np]: builds the buffer's text (saved or not) with the MPI
--- compiler and runs it on np processes (default: settings mpi.processes,
--- else 4). The server's errors (a program the backend refuses, no MPI
--- toolchain, a failed compilation) are shown as they come.
function M.run(np, opts)
  local bufnr = source_buffer()
  np = tonumber(np) or default_processes()
  M.execute(
    M.commands.run,
    { vim.uri_from_bufnr(bufnr), np },
    vim.tbl_extend("force", { bufnr = bufnr, title = "run", progress = true }, opts or {})
  )
end

--- :HpfBuild: compiles the buffer's text with the MPI compiler.
function M.build(opts)
  local bufnr = source_buffer()
  M.execute(
    M.commands.build,
    { vim.uri_from_bufnr(bufnr) },
    vim.tbl_extend("force", { bufnr = bufnr, title = "build", progress = true }, opts or {})
  )
end

--- :HpfGenerated: the SPMD Fortran + MPI program generated for the buffer.
function M.generated(opts)
  local bufnr = source_buffer()
  M.execute(
    M.commands.generated,
    { vim.uri_from_bufnr(bufnr) },
    vim.tbl_extend("force", { bufnr = bufnr, title = "generated", filetype = "fortran" }, opts or {})
  )
end

--- The lines of hpf.explainLoop's answer {text, svg, whatIf}: the text
--- picture, then the what-if table when there is one.
function M.picture_lines(result)
  if type(result) ~= "table" or type(result.text) ~= "string" then
    return result_lines(result)
  end
  local lines = split_lines(result.text)
  if type(result.whatIf) == "string" then
    table.insert(lines, "")
    vim.list_extend(lines, split_lines(result.whatIf))
  end
  return lines
end

--- :HpfTransferPattern: the picture of the loop under the cursor
--- (hpf.explainLoop): which processor owns which cells, where the arrays
--- sit (declared and optimal), the iterations, every message, and what other
--- distributions would cost, as text in a floating window (moving the
--- cursor closes it). opts.on_done(float_bufnr, float_win, err, result).
function M.transfer_pattern(opts)
  opts = opts or {}
  local bufnr = source_buffer()
  local win = vim.api.nvim_get_current_win()
  if vim.api.nvim_win_get_buf(win) ~= bufnr then
    win = vim.fn.bufwinid(bufnr)
  end
  local client = M.client(bufnr)
  if not client then
    vim.notify("hpf.nvim: " .. M.commands.explain_loop .. ": hpf-ls is not attached to this buffer.", vim.log.levels.WARN)
    return
  end
  local encoding = client.offset_encoding or "utf-16"
  local position = vim.lsp.util.make_position_params(win ~= -1 and win or 0, encoding).position
  local params = { command = M.commands.explain_loop, arguments = { vim.uri_from_bufnr(bufnr), position } }
  request(client, "workspace/executeCommand", params, function(err, result)
    vim.schedule(function()
      local lines = err and error_lines(M.commands.explain_loop, err) or M.picture_lines(result)
      local float_buf, float_win = vim.lsp.util.open_floating_preview(lines, "", {
        border = "rounded",
        focus_id = "hpf-transfer-pattern",
        wrap = false,
        max_width = math.max(vim.o.columns - 4, 20),
        max_height = math.max(vim.o.lines - 4, 5),
      })
      vim.b[float_buf].hpf_source = bufnr
      vim.b[float_buf].hpf_transfer_pattern = true
      if opts.on_done then
        opts.on_done(float_buf, float_win, err, result)
      end
    end)
  end, bufnr)
end

-- Setup ---------------------------------------------------------------------

local function create_commands()
  local create = vim.api.nvim_create_user_command
  create("HpfRun", function(args)
    M.run(args.args ~= "" and args.args or nil)
  end, { nargs = "?", desc = "hpf-ls: compile and run on N MPI processes" })
  create("HpfBuild", function()
    M.build()
  end, { nargs = 0, desc = "hpf-ls: compile with the MPI backend" })
  create("HpfTransferPattern", function()
    M.transfer_pattern()
  end, { nargs = 0, desc = "hpf-ls: picture of the loop under the cursor (owners, messages, what-if)" })
  create("HpfGenerated", function()
    M.generated()
  end, { nargs = 0, desc = "hpf-ls: the generated SPMD program" })
end

-- Lenses and other client-side runs of hpf.run / hpf.build show their answer
-- in the same split as the user commands.
local function register_client_commands()
  vim.lsp.commands[M.commands.run] = function(command, ctx)
    local args = command.arguments or {}
    M.execute(M.commands.run, args, { bufnr = ctx.bufnr, title = "run", progress = true })
  end
  vim.lsp.commands[M.commands.build] = function(command, ctx)
    M.execute(M.commands.build, command.arguments or {}, { bufnr = ctx.bufnr, title = "build", progress = true })
  end
end

--- Called for each buffer the server attaches to.
function M.on_attach(client, bufnr)
  if M.config.inlay_hints and vim.lsp.inlay_hint and client.server_capabilities.inlayHintProvider then
    vim.lsp.inlay_hint.enable(true, { bufnr = bufnr })
  end
  if M.config.codelens and client.server_capabilities.codeLensProvider then
    vim.lsp.codelens.refresh({ bufnr = bufnr })
    vim.api.nvim_create_autocmd({ "BufEnter", "InsertLeave", "TextChanged" }, {
      group = vim.api.nvim_create_augroup("hpf_codelens_" .. bufnr, { clear = true }),
      buffer = bufnr,
      callback = function()
        vim.lsp.codelens.refresh({ bufnr = bufnr })
      end,
    })
  end
  if M.config.on_attach then
    M.config.on_attach(client, bufnr)
  end
end

--- Starts (or reuses) the server for bufnr.
function M.start(bufnr)
  bufnr = bufnr or vim.api.nvim_get_current_buf()
  if vim.bo[bufnr].buftype ~= "" then
    return nil
  end
  local config = M.lsp_config()
  config.name = M.name
  config.root_dir = root_dir(bufnr, M.config.root_markers)
  config.root_markers = nil
  config.filetypes = nil
  if vim.fn.executable(config.cmd[1]) ~= 1 then
    vim.notify_once(("hpf.nvim: %s is not executable; set cmd in setup()"):format(config.cmd[1]), vim.log.levels.WARN)
    return nil
  end
  return vim.lsp.start(config, { bufnr = bufnr })
end

function M.setup(opts)
  M.config = vim.tbl_deep_extend("force", vim.deepcopy(defaults), opts or {})
  if opts and opts.settings then
    -- Settings replace the defaults' (no deep merge with {}).
    M.config.settings = opts.settings
  end
  -- .hpf files are Fortran (free form, as the server reads them); also
  -- ftdetect/hpf.lua. Buffers opened before setup() get the filetype now.
  vim.filetype.add({ extension = { hpf = "fortran", HPF = "fortran" } })
  for _, bufnr in ipairs(vim.api.nvim_list_bufs()) do
    local name = vim.api.nvim_buf_get_name(bufnr)
    if vim.api.nvim_buf_is_loaded(bufnr) and name:lower():match("%.hpf$") and vim.bo[bufnr].filetype == "" then
      vim.bo[bufnr].filetype = "fortran"
    end
  end
  create_commands()
  register_client_commands()

  local group = vim.api.nvim_create_augroup("hpf", { clear = true })
  vim.api.nvim_create_autocmd("LspAttach", {
    group = group,
    callback = function(args)
      local client = vim.lsp.get_client_by_id(args.data.client_id)
      if client and is_hpf_client(client) then
        M.on_attach(client, args.buf)
      end
    end,
  })
  if M.config.autostart then
    vim.api.nvim_create_autocmd("FileType", {
      group = group,
      pattern = M.config.filetypes,
      callback = function(args)
        M.start(args.buf)
      end,
    })
    -- Buffers already open when setup() runs.
    for _, bufnr in ipairs(vim.api.nvim_list_bufs()) do
      if vim.api.nvim_buf_is_loaded(bufnr) and vim.tbl_contains(M.config.filetypes, vim.bo[bufnr].filetype) then
        M.start(bufnr)
      end
    end
  end
  return M
end

return M
