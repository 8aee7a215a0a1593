from importlib.metadata import version

import shnap


def test_public_api_is_exact():
    assert shnap.__all__ == [
        "Attribution", "Bridge", "BridgeConfig", "CNNConfig", "CallableRiskModel", "DDPMConfig",
        "Editor", "GlobalMeanFill", "NoduleSpec", "NoduleTemplate", "OracleRisk", "Phantom",
        "RadialFit", "RePaint", "RealismReport", "RiskCNN3D", "RiskModel", "ShellMeanFill",
        "SnapMap", "SubprocessRiskModel", "TrainConfig", "ZeroFill", "check_insertion",
        "exact_sv_sii", "find_nodules", "gshnap", "lmpi_fit", "make_phantom", "nodule_free_crops",
        "nodule_library", "realism_report", "removal_study", "shnap", "snap_grid",
        "sybil_adapter_path", "train_risk_cnn", "unwindow", "window",
    ]  # fmt: skip
    for name in shnap.__all__:
        assert hasattr(shnap, name), name


def test_version_comes_from_the_installed_metadata():
    assert shnap.__version__ == version("shnap")


def test_adapter_script_ships_with_the_package():
    assert shnap.sybil_adapter_path().is_file()
