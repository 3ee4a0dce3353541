"""Reading a job's stage directory: a file's text, its last line, a program's error line."""
from types import SimpleNamespace

import pytest

from yeebench import stage_files


def _test(tmp_path, **files):
    for name, text in files.items():
        (tmp_path / name).write_bytes(text if isinstance(text, bytes) else text.encode())
    return SimpleNamespace(stagedir=str(tmp_path))


def test_read_stage_file_from_a_test_or_a_directory(tmp_path):
    test = _test(tmp_path, out='a\nb\n')
    assert stage_files.read_stage_file(test, 'out') == 'a\nb\n'
    assert stage_files.read_stage_file(str(tmp_path), 'out') == 'a\nb\n'
    assert stage_files.read_stage_file(test, 'out', binary=True) == b'a\nb\n'


def test_a_missing_file_raises_unless_given_a_default(tmp_path):
    test = _test(tmp_path)
    with pytest.raises(OSError):
        stage_files.read_stage_file(test, 'absent')
    assert stage_files.read_stage_file(test, 'absent', None) is None
    assert stage_files.read_stage_file(test, 'absent', '') == ''


def test_undecodable_bytes_are_replaced_not_raised(tmp_path):
    test = _test(tmp_path, err=b'bad \xff byte\n')
    assert stage_files.last_stage_line(test, 'err') == 'bad \ufffd byte'


def test_last_line_skips_blank_lines_and_strips():
    assert stage_files.last_line('first\n  last  \n\n  \n') == 'last'
    assert stage_files.last_line('') == '' and stage_files.last_line(None) == ''


def test_last_stage_line_is_empty_for_missing_or_blank_files(tmp_path):
    test = _test(tmp_path, blank='\n \n', out='x\ny\n')
    assert stage_files.last_stage_line(test, 'out') == 'y'
    assert stage_files.last_stage_line(test, 'blank') == ''
    assert stage_files.last_stage_line(test, 'absent') == ''


def test_error_lines_keep_only_the_programs_own():
    text = 'noise\nyee: error: first\n  yee: error: second  \nmore noise\n'
    assert stage_files.error_lines(text, 'yee: error:') == ['yee: error: first', 'yee: error: second']
    assert stage_files.error_lines('', 'yee: error:') == []


def test_last_error_line_prefers_the_error_then_the_last_line(tmp_path):
    test = _test(tmp_path, err='yee: error: bad grid\nmpirun noted that a rank exited\n',
                 plain='a\nlast\n', blank='\n')
    args = ('yee: error:', 'no stderr', 'nothing on stderr')
    assert stage_files.last_error_line(test, 'err', *args) == 'yee: error: bad grid'
    assert stage_files.last_error_line(test, 'plain', *args) == 'last'
    assert stage_files.last_error_line(test, 'blank', *args) == 'nothing on stderr'
    assert stage_files.last_error_line(test, 'absent', *args) == 'no stderr'
