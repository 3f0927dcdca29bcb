"""`GorillaFileSystem`: a small in-memory file tree with a current directory
(docs/bfcl-multi-turn.md#gorillafilesystem).

`Directory` and `File` carry upstream's class names and public attributes, since the state check (and the
harness's canonical state) sees them: a directory's `name` and `contents`, a file's `name` and `content`; a
directory's `parent` link is not compared.
"""

from __future__ import annotations

from collections.abc import Mapping

from .....errors import DataError
from .....json_value import JSONValue
from ..tables import Tables

Outcome = dict[str, object]  # a result: the listing, the content, a count, an error
_INVALID = '|/\\?%*:"><'  # characters a new file or directory name may not hold
_UNITS = ("B", "KB", "MB", "GB", "TB")


class File:
    """A file: its name and its content (a str, or whatever value a model wrote with `echo`: not coerced)."""

    def __init__(self, name: str, content: str = "") -> None:
        self.name = name
        self.content = content

    def _write(self, new_content: str) -> None:
        self.content = new_content

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, File):
            return False
        return self.name == other.name and self.content == other.content


class Directory:
    """A directory: its name, its parent (None for the root) and its entries by name, in insertion order."""

    def __init__(self, name: str, parent: Directory | None = None) -> None:
        self.name = name
        self.parent = parent
        self.contents: dict[str, File | Directory] = {}

    def _add_file(self, file_name: str, content: str = "") -> None:
        if file_name in self.contents:
            raise ValueError(f"File '{file_name}' already exists in directory '{self.name}'.")
        self.contents[file_name] = File(file_name, content)

    def _add_directory(self, dir_name: str) -> None:
        if dir_name in self.contents:
            raise ValueError(f"Directory '{dir_name}' already exists in directory '{self.name}'.")
        self.contents[dir_name] = Directory(dir_name, self)

    def _get_item(self, item_name: str) -> File | Directory | None:
        # "." is the directory itself even when an entry is named "." (docs/bfcl-multi-turn.md#gorillafilesystem)
        if item_name == ".":
            return self
        return self.contents.get(item_name)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Directory):
            return False
        return self.name == other.name and self.contents == other.contents


class GorillaFileSystem:
    """One tree from a root directory, and a current directory the commands act in.

    Attributes:
        long_context: whether the sample is a long-context one (compared, as upstream's).
        root: the root directory.
    """

    long_context: bool
    root: Directory

    def __init__(self, tables: Tables) -> None:
        self._tables = tables
        self._current_dir = Directory("/")

    def load_scenario(self, scenario: Mapping[str, JSONValue], long_context: bool = False) -> None:
        self.long_context = long_context  # set before root: the compared state keeps upstream's order
        self.root = Directory("/")  # without a tree, an empty root named "/"
        if "root" in scenario:
            tree = scenario["root"]
            if not isinstance(tree, dict):
                raise TypeError(f"GorillaFileSystem: root {tree!r} is not an object")
            name = next(iter(tree))  # the one top key names the root
            top = tree[name]
            if not isinstance(top, dict):
                raise TypeError(f"GorillaFileSystem: {name!r} is not an object")
            self.root = self._load_directory(top["contents"], Directory(name))
        self._current_dir = self.root

    def _load_directory(self, entries: JSONValue, directory: Directory) -> Directory:
        if not isinstance(entries, dict):
            raise TypeError(f"GorillaFileSystem: contents {entries!r} is not an object")
        innermost = True
        for name, entry in entries.items():
            if not isinstance(entry, dict):
                raise TypeError(f"GorillaFileSystem: entry {name!r} is not an object")
            if entry["type"] == "directory":
                innermost = False
                directory.contents[name] = self._load_directory(entry["contents"], Directory(name, directory))
            elif entry["type"] == "file":
                content = entry["content"]
                if not isinstance(content, str):
                    raise TypeError(f"GorillaFileSystem: the content of {name!r} is not a string")
                if self.long_context and name not in self._strings("FILES_TAIL_USED"):
                    content += self._string("FILE_CONTENT_EXTENSION")
                directory.contents[name] = File(name, content)
        # a long-context directory with no sub-directory gets the filler files after its own entries
        if innermost and self.long_context:
            for file_name in self._strings("POPULATE_FILE_EXTENSION"):
                directory._add_file(file_name)
        return directory

    def _string(self, name: str) -> str:
        value = self._tables.value(f"long_context.{name}")
        if not isinstance(value, str):
            raise DataError(f"bfcl tables: long_context.{name} is not a string")
        return value

    def _strings(self, name: str) -> list[str]:
        value = self._tables.value(f"long_context.{name}")
        if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
            raise DataError(f"bfcl tables: long_context.{name} is not a list of strings")
        return value

    # ------------------------------------------------------------------------------------- commands

    def pwd(self) -> Outcome:
        # upstream's loop also tests `name != root` (a str against a Directory), which never stops it: the
        # root's own name is part of the path (docs/bfcl-multi-turn.md#gorillafilesystem)
        path = []
        directory: Directory | None = self._current_dir
        while directory is not None:
            path.append(directory.name)
            directory = directory.parent
        return {"current_working_directory": "/" + "/".join(reversed(path))}

    def ls(self, a: bool = False) -> Outcome:
        contents = list(self._current_dir.contents)
        if not a:
            contents = [item for item in contents if not item.startswith(".")]
        return {"current_directory_content": contents}

    def cd(self, folder: str) -> Outcome:
        folder = folder.rstrip("/")
        if folder == "":
            folder = "/"
        if folder not in {".", "..", "/"} and "/" in folder:
            return {"error": f"cd: {folder}: Unsupported path. Only one folder level at a time is supported."}
        if folder == "..":
            if self._current_dir.parent is not None:
                self._current_dir = self._current_dir.parent
            elif self.root == self._current_dir:
                return {"error": "Current directory is already the root. Cannot go back."}
            else:
                return {"error": "cd: ..: No such directory"}
            return {}
        target = self._navigate(folder)
        if isinstance(target, dict):
            return target
        self._current_dir = target
        return {"current_working_directory": target.name}

    def mkdir(self, dir_name: str) -> Outcome | None:
        if not _valid_name(dir_name):
            return {"error": f"mkdir: cannot create directory '{dir_name}': Invalid character"}
        if dir_name in self._current_dir.contents:
            return {"error": f"mkdir: cannot create directory '{dir_name}': File exists"}
        self._current_dir._add_directory(dir_name)
        return None

    def touch(self, file_name: str) -> Outcome | None:
        if not _valid_name(file_name):
            return {"error": f"touch: cannot touch '{file_name}': Invalid character"}
        if file_name in self._current_dir.contents:
            return {"error": f"touch: cannot touch '{file_name}': File exists"}
        self._current_dir._add_file(file_name)
        return None

    def echo(self, content: str, file_name: str | None = None) -> Outcome | None:
        if file_name is None:
            return {"terminal_output": content}
        if not _valid_name(file_name):
            return {"error": f"echo: cannot write to '{file_name}': Invalid character"}
        if not file_name:
            return {"terminal_output": content}
        if file_name not in self._current_dir.contents:
            return {"error": f"echo: cannot write to '{file_name}': No such file"}
        item = self._current_dir._get_item(file_name)
        if not isinstance(item, File):  # upstream calls `_write` on whatever it found: a directory has none
            raise AttributeError(f"'{type(item).__name__}' object has no attribute '_write'")
        item._write(content)
        return None

    def cat(self, file_name: str) -> Outcome:
        if not _valid_name(file_name):
            return {"error": f"cat: '{file_name}': Invalid character"}
        if file_name not in self._current_dir.contents:
            return {"error": f"cat: '{file_name}': No such file or directory"}
        item = self._current_dir._get_item(file_name)
        if isinstance(item, File):
            return {"file_content": item.content}
        return {"error": f"cat: '{file_name}': Is a directory"}

    def find(self, path: str = ".", name: str | None = None) -> Outcome:
        matches: list[str] = []
        target = self._navigate(path)
        if isinstance(target, dict):
            message = target.get("error", "")
            if isinstance(message, str) and message.startswith("cd:"):
                return {"error": message.replace("cd:", "find:", 1)}
            return target

        def search(directory: Directory, base: str) -> None:  # depth first, in insertion order
            for item_name, item in directory.contents.items():
                item_path = f"{base}/{item_name}"
                if name is None or name in item_name:
                    matches.append(item_path)
                if isinstance(item, Directory):
                    search(item, item_path)

        search(target, path.rstrip("/"))
        return {"matches": matches}

    def wc(self, file_name: str, mode: str = "l") -> Outcome:
        if mode not in ["l", "w", "c"]:
            return {"error": f"wc: invalid mode '{mode}'"}
        content = self._text(file_name)
        if content is not None:
            if mode == "l":
                return {"count": len(content.splitlines()), "type": "lines"}
            if mode == "w":
                return {"count": len(content.split()), "type": "words"}
            return {"count": len(content), "type": "characters"}
        return {"error": f"wc: {file_name}: No such file or directory"}

    def sort(self, file_name: str) -> Outcome:
        content = self._text(file_name)
        if content is not None:
            return {"sorted_content": "\n".join(sorted(content.splitlines()))}
        return {"error": f"sort: {file_name}: No such file or directory"}

    def grep(self, file_name: str, pattern: str) -> Outcome:
        content = self._text(file_name)
        if content is not None:
            return {"matching_lines": [line for line in content.splitlines() if pattern in line]}
        return {"error": f"grep: {file_name}: No such file or directory"}

    def du(self, human_readable: bool = False) -> Outcome:
        total: float = _size(self._current_dir)
        if human_readable:
            for unit in _UNITS:
                if total < 1024:
                    size = f"{total:.2f} {unit}"
                    break
                total /= 1024
            else:
                size = f"{total:.2f} PB"
        else:
            size = f"{total} bytes"
        return {"disk_usage": size}

    def tail(self, file_name: str, lines: int = 10) -> Outcome:
        content = self._text(file_name)
        if content is not None:
            all_lines = content.splitlines()
            if lines > len(all_lines):
                lines = len(all_lines)
            return {"last_lines": "\n".join(all_lines[-lines:])}  # 0 keeps every line, -n drops the first n
        return {"error": f"tail: {file_name}: No such file or directory"}

    def diff(self, file_name1: str, file_name2: str) -> Outcome:
        if file_name1 in self._current_dir.contents and file_name2 in self._current_dir.contents:
            first = self._current_dir._get_item(file_name1)
            second = self._current_dir._get_item(file_name2)
            if isinstance(first, File) and isinstance(second, File):
                # lines paired by position; the longer file's surplus lines are ignored
                pairs = zip(first.content.splitlines(), second.content.splitlines(), strict=False)
                return {"diff_lines": "\n".join(f"- {one}\n+ {two}" for one, two in pairs if one != two)}
        return {"error": f"diff: {file_name1} or {file_name2}: No such file or directory"}

    def mv(self, source: str, destination: str) -> Outcome:
        here = self._current_dir
        if source not in here.contents:
            return {"error": f"mv: cannot move '{source}': No such file or directory"}
        item = here._get_item(source)
        if not isinstance(item, (File, Directory)):
            return {"error": f"mv: cannot move '{source}': Not a file or directory"}
        if "/" in destination:
            return {"error": "mv: path not allowed in destination. Provide only a file or directory name."}
        if destination in here.contents:
            target = here._get_item(destination)
            if not isinstance(target, Directory):
                return {"error": f"mv: cannot move '{source}' to '{destination}': Not a directory"}
            if f"{source}" in target.contents:  # the name as text, as upstream's check has it
                return {"error": f"mv: cannot move '{source}' to '{destination}/{source}': File exists"}
            here.contents.pop(source)
            _place(target, source, item, share=True)
            return {"result": f"'{source}' moved to '{destination}/{source}'"}
        here.contents.pop(source)
        _place(here, destination, item, share=True)
        return {"result": f"'{source}' moved to '{destination}'"}

    def rm(self, file_name: str) -> Outcome:
        here = self._current_dir
        if file_name not in here.contents:
            return {"error": f"rm: cannot remove '{file_name}': No such file or directory"}
        if not isinstance(here._get_item(file_name), (File, Directory)):
            return {"error": f"rm: cannot remove '{file_name}': Not a file or directory"}
        here.contents.pop(file_name)  # a directory goes with everything in it
        return {"result": f"'{file_name}' removed"}

    def rmdir(self, dir_name: str) -> Outcome:
        here = self._current_dir
        if dir_name not in here.contents:
            return {"error": f"rmdir: cannot remove '{dir_name}': No such file or directory"}
        item = here._get_item(dir_name)
        if not isinstance(item, Directory):
            return {"error": f"rmdir: cannot remove '{dir_name}': Not a directory"}
        if item.contents:
            return {"error": f"rmdir: cannot remove '{dir_name}': Directory not empty"}
        here.contents.pop(dir_name)
        return {"result": f"'{dir_name}' removed"}

    def cp(self, source: str, destination: str) -> Outcome:
        here = self._current_dir
        if source not in here.contents:
            return {"error": f"cp: cannot copy '{source}': No such file or directory"}
        item = here._get_item(source)
        if not isinstance(item, (File, Directory)):
            return {"error": f"cp: cannot copy '{source}': Not a file or directory"}
        if "/" in destination:
            return {"error": "cp: path not allowed in destination. Provide only a file or directory name."}
        if destination in here.contents:
            target = here._get_item(destination)
            if not isinstance(target, Directory):
                return {"error": f"cp: cannot copy '{source}' to '{destination}': Not a directory"}
            # upstream looks for "destination/source" among the entries, a key never present: copying over an
            # existing name raises from _add_file/_add_directory instead (docs/bfcl-multi-turn.md#gorillafilesystem)
            if f"{destination}/{source}" in target.contents:
                return {"error": f"cp: cannot copy '{source}' to '{destination}/{source}': File exists"}
            _place(target, source, item, share=False)
            return {"result": f"'{source}' copied to '{destination}/{source}'"}
        _place(here, destination, item, share=False)
        return {"result": f"'{source}' copied to '{destination}'"}

    # ------------------------------------------------------------------------------------- helpers

    def _navigate(self, path: str | None) -> Directory | Outcome:
        """The directory `path` names from the current one (from the root if it starts with "/"), or an error."""
        if path is None or path == ".":
            return self._current_dir
        if path == "/":
            return self.root
        names = path.strip("/").split("/")
        directory = self._current_dir if not path.startswith("/") else self.root
        for name in names:
            found = directory._get_item(name)
            if not isinstance(found, Directory):
                return {"error": f"cd: '{path}': No such file or directory"}
            directory = found
        return directory

    def _text(self, file_name: str) -> str | None:
        """The content of the file `file_name` in the current directory; None when it is missing or a directory."""
        if file_name in self._current_dir.contents:
            item = self._current_dir._get_item(file_name)
            if isinstance(item, File):
                return item.content
        return None


def _valid_name(name: str) -> bool:
    return not any(character in name for character in _INVALID)


def _place(directory: Directory, name: str, item: File | Directory, share: bool) -> None:
    """Put a new entry `name` made from `item` into `directory`: a file is made anew with the same content; a
    directory is a new Directory whose entries are `item`'s own dict (`share`, a move) or a shallow copy of it (a
    copy: the entries themselves stay shared between both trees, as upstream's)."""
    if isinstance(item, File):
        directory._add_file(name, item.content)
        return
    directory._add_directory(name)
    made = directory.contents[name]
    assert isinstance(made, Directory)
    made.contents = item.contents if share else item.contents.copy()


def _size(item: File | Directory) -> int:
    """UTF-8 bytes of a file's content, or of everything under a directory."""
    if isinstance(item, File):
        return len(item.content.encode("utf-8"))
    return sum(_size(child) for child in item.contents.values())

