"""Verify targets: stable_baselines3 2.9.2, reinforcement learning. The policies of PPO/A2C, SAC,
TD3 and DQN built from gymnasium spaces (no environment is stepped): forward, evaluate_actions,
_predict, predict and predict_values, the actors and critics, the action distributions'
log_prob/entropy/sample, observation preprocessing and the target networks' Polyak update.

Left out: `predict` on a Dict observation of numpy arrays. `obs_to_tensor` deep-copies the dict,
and Dynamo fails on `copy.deepcopy` of an ndarray (TorchRuntimeError: 'ndarray' object has no
attribute '__deepcopy__') instead of breaking the graph, so verify reports an error."""

import numpy as np
import torch


B, OBS, ACT = 4, 6, 2  # batch, observation size, continuous action size
NET = [16, 16]


def _lr(_progress):
    return 3e-4


def torchlint_targets():
    from gymnasium import spaces

    from stable_baselines3.common import distributions as D
    from stable_baselines3.common.policies import (
        ActorCriticCnnPolicy,
        ActorCriticPolicy,
        MultiInputActorCriticPolicy,
    )
    from stable_baselines3.common.preprocessing import preprocess_obs
    from stable_baselines3.common.utils import polyak_update
    from stable_baselines3.dqn.policies import DQNPolicy
    from stable_baselines3.sac.policies import SACPolicy
    from stable_baselines3.td3.policies import TD3Policy

    torch.manual_seed(0)
    np.random.seed(0)
    box_obs = spaces.Box(-1.0, 1.0, (OBS,), np.float32)
    box_act = spaces.Box(-2.0, 2.0, (ACT,), np.float32)
    obs = torch.randn(B, OBS)

    def ac(action_space, **kw):
        # PPO / A2C policy; eval mode, as for acting and evaluating.
        return ActorCriticPolicy(box_obs, action_space, _lr, net_arch=NET, **kw).eval()

    ppo_box = ac(box_act)
    ppo_sde = ac(box_act, use_sde=True, log_std_init=-1.0)
    ppo_sde.reset_noise(B)
    ppo_disc = ac(spaces.Discrete(3))
    a2c_md = ac(spaces.MultiDiscrete([3, 2]), activation_fn=torch.nn.ReLU)
    ppo_mb = ac(spaces.MultiBinary(3), share_features_extractor=False)

    image_space = spaces.Box(0, 255, (3, 36, 36), np.uint8)
    # ortho_init=False: the orthogonal init of the CNN's large layers is what makes building slow.
    ppo_cnn = ActorCriticCnnPolicy(image_space, spaces.Discrete(4), _lr, net_arch=NET, ortho_init=False,
                                   features_extractor_kwargs={"features_dim": 32}).eval()
    images = torch.randint(0, 256, (2, 3, 36, 36)).float()
    np_images = np.random.randint(0, 256, (2, 3, 36, 36)).astype(np.uint8)

    dict_space = spaces.Dict({"vec": box_obs, "cell": spaces.Discrete(5),
                              "buttons": spaces.MultiDiscrete([2, 3]), "flags": spaces.MultiBinary(2)})
    dict_obs = {"vec": obs, "cell": torch.tensor([0, 4, 2, 1]),
                "buttons": torch.tensor([[0, 2], [1, 0], [1, 1], [0, 0]]),
                "flags": torch.tensor([[0, 1], [1, 1], [0, 0], [1, 0]])}
    ppo_dict = MultiInputActorCriticPolicy(dict_space, box_act, _lr, net_arch=NET).eval()

    sac = SACPolicy(box_obs, box_act, _lr, net_arch=NET).eval()
    sac_sde = SACPolicy(box_obs, box_act, _lr, net_arch=NET, use_sde=True).eval()
    sac_sde.reset_noise(B)
    td3 = TD3Policy(box_obs, box_act, _lr, net_arch=NET, n_critics=2).eval()
    dqn = DQNPolicy(box_obs, spaces.Discrete(3), _lr, net_arch=NET).eval()

    cont_actions = torch.rand(B, ACT) * 3.8 - 1.9
    mean, log_std = torch.randn(B, ACT), torch.randn(B, ACT) * 0.3 - 0.5
    categorical = D.CategoricalDistribution(3)
    multicat = D.MultiCategoricalDistribution([3, 2]).proba_distribution(torch.randn(B, 5))
    bernoulli = D.BernoulliDistribution(3)
    squashed = D.SquashedDiagGaussianDistribution(ACT)
    sde = D.StateDependentNoiseDistribution(ACT, full_std=True, squash_output=True)
    sde_net, sde_log_std = sde.proba_distribution_net(latent_dim=8, log_std_init=-1.0)
    sde.sample_weights(sde_log_std, batch_size=B)
    latent_sde = torch.randn(B, 8)

    return {
        # -- PPO / A2C (ActorCriticPolicy) ---------------------------------------------------
        "sb3_ppo_box_forward": (ppo_box, (obs,)),
        "sb3_ppo_sde_forward": (ppo_sde, (obs,)),
        "sb3_ppo_box_evaluate_actions": (ppo_box.evaluate_actions, (obs, cont_actions)),
        "sb3_ppo_disc_evaluate_actions": (ppo_disc.evaluate_actions, (obs, torch.tensor([0, 2, 1, 2]))),
        "sb3_a2c_md_evaluate_actions": (a2c_md.evaluate_actions, (obs, torch.tensor([[0, 1], [2, 0], [1, 1], [2, 1]]))),
        "sb3_ppo_mb_predict_": (ppo_mb._predict, (obs,), {"deterministic": True}),
        "sb3_ppo_predict_values": (ppo_box.predict_values, (obs,)),
        "sb3_ppo_predict": (ppo_disc.predict, (obs.numpy(),), {"deterministic": True}),
        "sb3_ppo_box_predict": (ppo_box.predict, (obs.numpy(),)),
        "sb3_ppo_cnn_forward": (ppo_cnn, (images,)),
        "sb3_ppo_cnn_predict": (ppo_cnn.predict, (np_images,), {"deterministic": True}),
        "sb3_ppo_dict_evaluate_actions": (ppo_dict.evaluate_actions, (dict_obs, cont_actions)),
        # -- SAC / TD3 / DQN -----------------------------------------------------------------
        "sb3_sac_predict_": (sac._predict, (obs,)),
        "sb3_sac_predict": (sac.predict, (obs.numpy(),), {"deterministic": True}),
        "sb3_sac_action_log_prob": (sac.actor.action_log_prob, (obs,)),
        "sb3_sac_sde_action_log_prob": (sac_sde.actor.action_log_prob, (obs,)),
        "sb3_sac_critic_forward": (sac.critic, (obs, cont_actions)),
        "sb3_td3_actor_forward": (td3.actor, (obs,)),
        "sb3_td3_q1_forward": (td3.critic.q1_forward, (obs, cont_actions)),
        "sb3_dqn_predict_": (dqn._predict, (obs,)),
        "sb3_dqn_qnet_forward": (dqn.q_net, (obs,)),
        # -- distributions, preprocessing, target-network update ------------------------------
        "sb3_dist_diag_log_prob_from_params": (D.DiagGaussianDistribution(ACT).log_prob_from_params, (mean, log_std)),
        "sb3_dist_squashed_log_prob": (squashed.proba_distribution(mean, log_std).log_prob, (torch.tanh(cont_actions),)),
        "sb3_dist_squashed_log_prob_from_params": (squashed.log_prob_from_params, (mean, log_std)),
        "sb3_dist_categorical_log_prob_from_params": (categorical.log_prob_from_params, (torch.randn(B, 3),)),
        "sb3_dist_multicat_entropy": (multicat.entropy, ()),
        "sb3_dist_bernoulli_actions_from_params": (bernoulli.actions_from_params, (torch.randn(B, 3),)),
        "sb3_dist_sde_log_prob_from_params": (sde.log_prob_from_params, (mean, sde_log_std, latent_sde)),
        "sb3_preprocess_obs": (preprocess_obs, (dict_obs, dict_space)),
        "sb3_polyak_update": (polyak_update, (list(sac.critic.parameters()), list(sac.critic_target.parameters()), 0.005)),
    }


# What a user compiling each target would name in torchlint's `entry-points` setting: the
# dotted path of the function as it is defined (module path, then Class.method or function).
COMPILES = {
    "sb3_ppo_box_forward": ["stable_baselines3.common.policies.ActorCriticPolicy.forward"],
    "sb3_ppo_sde_forward": ["stable_baselines3.common.policies.ActorCriticPolicy.forward"],
    "sb3_ppo_box_evaluate_actions": ["stable_baselines3.common.policies.ActorCriticPolicy.evaluate_actions"],
    "sb3_ppo_disc_evaluate_actions": ["stable_baselines3.common.policies.ActorCriticPolicy.evaluate_actions"],
    "sb3_a2c_md_evaluate_actions": ["stable_baselines3.common.policies.ActorCriticPolicy.evaluate_actions"],
    "sb3_ppo_mb_predict_": ["stable_baselines3.common.policies.ActorCriticPolicy._predict"],
    "sb3_ppo_predict_values": ["stable_baselines3.common.policies.ActorCriticPolicy.predict_values"],
    "sb3_ppo_predict": ["stable_baselines3.common.policies.BasePolicy.predict"],
    "sb3_ppo_box_predict": ["stable_baselines3.common.policies.BasePolicy.predict"],
    "sb3_ppo_cnn_predict": ["stable_baselines3.common.policies.BasePolicy.predict"],
    "sb3_sac_predict": ["stable_baselines3.common.policies.BasePolicy.predict"],
    "sb3_ppo_cnn_forward": ["stable_baselines3.common.policies.ActorCriticPolicy.forward"],
    "sb3_ppo_dict_evaluate_actions": ["stable_baselines3.common.policies.ActorCriticPolicy.evaluate_actions"],
    "sb3_sac_predict_": ["stable_baselines3.sac.policies.SACPolicy._predict"],
    "sb3_sac_action_log_prob": ["stable_baselines3.sac.policies.Actor.action_log_prob"],
    "sb3_sac_sde_action_log_prob": ["stable_baselines3.sac.policies.Actor.action_log_prob"],
    "sb3_sac_critic_forward": ["stable_baselines3.common.policies.ContinuousCritic.forward"],
    "sb3_td3_actor_forward": ["stable_baselines3.td3.policies.Actor.forward"],
    "sb3_td3_q1_forward": ["stable_baselines3.common.policies.ContinuousCritic.q1_forward"],
    "sb3_dqn_predict_": ["stable_baselines3.dqn.policies.DQNPolicy._predict"],
    "sb3_dqn_qnet_forward": ["stable_baselines3.dqn.policies.QNetwork.forward"],
    "sb3_dist_diag_log_prob_from_params": ["stable_baselines3.common.distributions.DiagGaussianDistribution.log_prob_from_params"],
    "sb3_dist_squashed_log_prob": ["stable_baselines3.common.distributions.SquashedDiagGaussianDistribution.log_prob"],
    "sb3_dist_squashed_log_prob_from_params": ["stable_baselines3.common.distributions.SquashedDiagGaussianDistribution.log_prob_from_params"],
    "sb3_dist_categorical_log_prob_from_params": ["stable_baselines3.common.distributions.CategoricalDistribution.log_prob_from_params"],
    "sb3_dist_multicat_entropy": ["stable_baselines3.common.distributions.MultiCategoricalDistribution.entropy"],
    "sb3_dist_bernoulli_actions_from_params": ["stable_baselines3.common.distributions.BernoulliDistribution.actions_from_params"],
    "sb3_dist_sde_log_prob_from_params": ["stable_baselines3.common.distributions.StateDependentNoiseDistribution.log_prob_from_params"],
    "sb3_preprocess_obs": ["stable_baselines3.common.preprocessing.preprocess_obs"],
    "sb3_polyak_update": ["stable_baselines3.common.utils.polyak_update"],
}
