from importlib.metadata import version

import shnap


def test_public_api_is_exact():
    assert sorted(shnap.__all__) == shnap.__all__
    for name in shnap.__all__:
        assert hasattr(shnap, name), name


def test_version_comes_from_the_installed_metadata():
    assert shnap.__version__ == version("shnap")


def test_adapter_script_ships_with_the_package():
    assert shnap.sybil_adapter_path().is_file()
